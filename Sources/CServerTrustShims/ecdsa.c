// libcrypto's EC_KEY and ECDSA_verify, which OpenSSL 3.0 deprecates in favour of EVP_PKEY but
// keeps for the whole 3.x series. This file is the only place that may use deprecated API, so
// the suppression stays here and nowhere else. No logic: one call per wrapper.
//
// Built without the deprecated API (OPENSSL_NO_DEPRECATED_3_0), every wrapper reports failure
// and TrustEvaluation uses its EVP_PKEY path instead.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CServerTrustShims.h"
#include <openssl/ec.h>

#ifndef OPENSSL_NO_DEPRECATED_3_0
#include <openssl/ecdsa.h>

int CServerTrustShims_has_EC_KEY(void) { return 1; }
struct ec_key_st *CServerTrustShims_EC_KEY_new(void) { return EC_KEY_new(); }
void CServerTrustShims_EC_KEY_free(struct ec_key_st *key) { EC_KEY_free(key); }
int CServerTrustShims_EC_KEY_set_group(struct ec_key_st *key, const EC_GROUP *group) { return EC_KEY_set_group(key, group); }
int CServerTrustShims_EC_KEY_oct2key(struct ec_key_st *key, const unsigned char *buf, size_t len) { return EC_KEY_oct2key(key, buf, len, NULL); }
int CServerTrustShims_ECDSA_verify(const unsigned char *dgst, int dgstlen, const unsigned char *sig, int siglen, struct ec_key_st *key) {
    return ECDSA_verify(0, dgst, dgstlen, sig, siglen, key);
}
#else
int CServerTrustShims_has_EC_KEY(void) { return 0; }
struct ec_key_st *CServerTrustShims_EC_KEY_new(void) { return NULL; }
void CServerTrustShims_EC_KEY_free(struct ec_key_st *key) { (void)key; }
int CServerTrustShims_EC_KEY_set_group(struct ec_key_st *key, const EC_GROUP *group) { (void)key; (void)group; return 0; }
int CServerTrustShims_EC_KEY_oct2key(struct ec_key_st *key, const unsigned char *buf, size_t len) { (void)key; (void)buf; (void)len; return 0; }
int CServerTrustShims_ECDSA_verify(const unsigned char *dgst, int dgstlen, const unsigned char *sig, int siglen, struct ec_key_st *key) {
    (void)dgst; (void)dgstlen; (void)sig; (void)siglen; (void)key; return -1;
}
#endif
