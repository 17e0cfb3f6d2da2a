// For pthread_setname_np, a GNU extension (defined before any header includes <features.h>).
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include "CServerTrustShims.h"

void CServerTrustShims_OPENSSL_free(void *p) { OPENSSL_free(p); }
int CServerTrustShims_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }
size_t CServerTrustShims_heap_in_use(void) { struct mallinfo2 info = mallinfo2(); return info.uordblks + info.hblkhd; }

int CServerTrustShims_pipe_cloexec(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

int CServerTrustShims_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err) {
    // The child starts with no signal blocked and the usual ones at their defaults: it would
    // otherwise inherit the spawning thread's mask and ignored signals (a test runner's worker
    // thread may block SIGTERM), and a server told to stop would not.
    posix_spawnattr_t attributes;
    int status = posix_spawnattr_init(&attributes);
    if (status != 0) return status;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    int reset[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) sigaddset(&defaults, reset[i]);
    posix_spawn_file_actions_t actions;
    if ((status = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
        (status = posix_spawnattr_setsigdefault(&attributes, &defaults)) == 0 &&
        (status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0 &&
        (status = posix_spawn_file_actions_init(&actions)) == 0) {
        if ((status = posix_spawn_file_actions_adddup2(&actions, in, 0)) == 0 &&
            (status = posix_spawn_file_actions_adddup2(&actions, out, 1)) == 0 &&
            (status = posix_spawn_file_actions_adddup2(&actions, err, 2)) == 0 &&
            (status = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0) {
            status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    posix_spawnattr_destroy(&attributes);
    return status;
}
long CServerTrustShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
long CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
long CServerTrustShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
long CServerTrustShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long CServerTrustShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long CServerTrustShims_SSL_set_retry_verify(SSL *ssl) { return SSL_set_retry_verify(ssl); }
long CServerTrustShims_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509) { return SSL_CTX_add_extra_chain_cert(ctx, x509); }
uint64_t CServerTrustShims_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
uint64_t CServerTrustShims_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
int CServerTrustShims_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
X509 *CServerTrustShims_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
void CServerTrustShims_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
STACK_OF(X509) *CServerTrustShims_sk_X509_new_null(void) { return sk_X509_new_null(); }
int CServerTrustShims_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **pp) { return BIO_get_mem_data(bio, pp); }

CURLcode CServerTrustShims_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
CURLcode CServerTrustShims_curl_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
CURLcode CServerTrustShims_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
CURLcode CServerTrustShims_curl_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
CURLcode CServerTrustShims_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
CURLcode CServerTrustShims_curl_easy_setopt_ssl_ctx_function(CURL *h, curl_ssl_ctx_callback f) { return curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_write_function(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_header_function(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_read_function(CURL *h, curl_read_callback f) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_xferinfo_function(CURL *h, curl_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_sockopt_function(CURL *h, curl_sockopt_callback f) { return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_setopt_prereq_function(CURL *h, curl_prereq_callback f) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, f); }
int CServerTrustShims_SSL_get_ex_new_index(CRYPTO_EX_free *free_func) { return SSL_get_ex_new_index(0, NULL, NULL, NULL, free_func); }
CURLcode CServerTrustShims_curl_easy_setopt_seek_function(CURL *h, curl_seek_callback f) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, f); }
CURLcode CServerTrustShims_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
CURLcode CServerTrustShims_curl_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
CURLcode CServerTrustShims_curl_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
CURLcode CServerTrustShims_curl_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
CURLMcode CServerTrustShims_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
CURLSHcode CServerTrustShims_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }
int CServerTrustShims_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }
// ServerTrustHTTP (issue 5)
CURLcode CServerTrustShims_curl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
CURLSHcode CServerTrustShims_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v) { return curl_share_setopt(s, o, v); }
CURLSHcode CServerTrustShims_curl_share_setopt_lockfunc(CURLSH *s, curl_lock_function f) { return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, f); }
CURLSHcode CServerTrustShims_curl_share_setopt_unlockfunc(CURLSH *s, curl_unlock_function f) { return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, f); }
long CServerTrustShims_SSL_add1_chain_cert(SSL *ssl, X509 *x509) { return SSL_add1_chain_cert(ssl, x509); }
// ServerTrustHTTP (issue 25)
long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type) { return SSL_CTX_set_tlsext_status_type(ctx, type); }
long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*callback)(SSL *, void *), void *arg) {
    return SSL_CTX_set_tlsext_status_cb(ctx, callback) && SSL_CTX_set_tlsext_status_arg(ctx, arg);
}
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response) {
    return SSL_get_tlsext_status_ocsp_resp(ssl, response);
}

// TrustEvaluation (issue 3): libcrypto's EC_KEY and ECDSA_verify, which OpenSSL 3.0 deprecates in
// favour of EVP_PKEY but keeps for the whole 3.x series. The deprecation warning is silenced for
// these wrappers only. They live in this file, not one of their own, because valgrind 3.19 (the
// one Debian 12 ships, which ../shared/bench's callgrind counts use) cannot read a binary holding
// two DWARF 5 C compile units. Built without the deprecated API (OPENSSL_NO_DEPRECATED_3_0),
// every wrapper reports failure and TrustEvaluation uses its EVP_PKEY path instead.
#ifndef OPENSSL_NO_DEPRECATED_3_0
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
int CServerTrustShims_has_EC_KEY(void) { return 1; }
struct ec_key_st *CServerTrustShims_EC_KEY_new(void) { return EC_KEY_new(); }
void CServerTrustShims_EC_KEY_free(struct ec_key_st *key) { EC_KEY_free(key); }
int CServerTrustShims_EC_KEY_set_group(struct ec_key_st *key, const EC_GROUP *group) { return EC_KEY_set_group(key, group); }
int CServerTrustShims_EC_KEY_oct2key(struct ec_key_st *key, const unsigned char *buf, size_t len) { return EC_KEY_oct2key(key, buf, len, NULL); }
int CServerTrustShims_ECDSA_verify(const unsigned char *dgst, int dgstlen, const unsigned char *sig, int siglen, struct ec_key_st *key) {
    return ECDSA_verify(0, dgst, dgstlen, sig, siglen, key);
}
#pragma GCC diagnostic pop
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
