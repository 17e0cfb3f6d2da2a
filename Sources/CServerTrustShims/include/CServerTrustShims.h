#ifndef SERVERTRUST_SHIMS_H
#define SERVERTRUST_SHIMS_H
// One-line wrappers for OpenSSL macros the Clang importer cannot see, for libcurl's variadic
// setters, which Swift cannot call, and for the deprecated EC_KEY calls (the one block in
// shims.c allowed to use deprecated OpenSSL API). No logic lives here.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <curl/curl.h>

/// Names the calling thread (what `top -H`, gdb and perf show); 15 bytes at most. The Glibc
/// module does not export this GNU extension.
int CServerTrustShims_set_thread_name(const char *name);
/// Bytes the C allocator has handed out and not taken back (glibc `mallinfo2`: `uordblks` plus
/// `hblkhd`), which, unlike resident memory, does not count pages the allocator keeps for reuse.
/// 0 where malloc is not glibc's (AddressSanitizer's allocator replaces it).
size_t CServerTrustShims_heap_in_use(void);
/// pipe2(ends, O_CLOEXEC), a GNU extension the Glibc module does not export: 0 or -1 (errno).
int CServerTrustShims_pipe_cloexec(int ends[2]);
/// posix_spawn with `in`, `out` and `err` as the child's descriptors 0, 1 and 2 and every other
/// descriptor closed in the child (glibc's posix_spawn_file_actions_addclosefrom_np), so a
/// child never inherits a descriptor another thread opened meanwhile; the child starts with no
/// signal blocked and the common ones at their defaults. Returns 0 or an errno.
int CServerTrustShims_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err);
void CServerTrustShims_OPENSSL_free(void *p);
long CServerTrustShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
long CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
long CServerTrustShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long CServerTrustShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
long CServerTrustShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
long CServerTrustShims_SSL_set_retry_verify(SSL *ssl);
long CServerTrustShims_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509);
uint64_t CServerTrustShims_SSL_OP_NO_COMPRESSION(void);
uint64_t CServerTrustShims_SSL_OP_NO_TICKET(void);
int CServerTrustShims_sk_X509_num(const STACK_OF(X509) *sk);
X509 *CServerTrustShims_sk_X509_value(const STACK_OF(X509) *sk, int i);
void CServerTrustShims_sk_X509_pop_free(STACK_OF(X509) *sk);
STACK_OF(X509) *CServerTrustShims_sk_X509_new_null(void);
int CServerTrustShims_sk_X509_push(STACK_OF(X509) *sk, X509 *x);
long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **pp);

CURLcode CServerTrustShims_curl_easy_setopt_long(CURL *h, CURLoption o, long v);
CURLcode CServerTrustShims_curl_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v);
CURLcode CServerTrustShims_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode CServerTrustShims_curl_easy_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode CServerTrustShims_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode CServerTrustShims_curl_easy_setopt_ssl_ctx_function(CURL *h, curl_ssl_ctx_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_write_function(CURL *h, curl_write_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_header_function(CURL *h, curl_write_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_read_function(CURL *h, curl_read_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_xferinfo_function(CURL *h, curl_xferinfo_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_sockopt_function(CURL *h, curl_sockopt_callback f);
CURLcode CServerTrustShims_curl_easy_setopt_prereq_function(CURL *h, curl_prereq_callback f);
/// A new SSL ex_data index whose values `free_func` releases when their SSL is freed.
int CServerTrustShims_SSL_get_ex_new_index(CRYPTO_EX_free *free_func);
CURLcode CServerTrustShims_curl_easy_setopt_seek_function(CURL *h, curl_seek_callback f);
CURLcode CServerTrustShims_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode CServerTrustShims_curl_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v);
CURLcode CServerTrustShims_curl_easy_getinfo_double(CURL *h, CURLINFO i, double *v);
CURLcode CServerTrustShims_curl_easy_getinfo_string(CURL *h, CURLINFO i, char **v);
CURLMcode CServerTrustShims_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v);
CURLSHcode CServerTrustShims_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v);
int CServerTrustShims_EVP_PKEY_PUBLIC_KEY(void);

// ServerTrustHTTP (issue 5)
CURLcode CServerTrustShims_curl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v);
CURLSHcode CServerTrustShims_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v);
CURLSHcode CServerTrustShims_curl_share_setopt_lockfunc(CURLSH *s, curl_lock_function f);
CURLSHcode CServerTrustShims_curl_share_setopt_unlockfunc(CURLSH *s, curl_unlock_function f);
long CServerTrustShims_SSL_add1_chain_cert(SSL *ssl, X509 *x509);
// ServerTrustHTTP (issue 25): stapled OCSP (status_request), macros over SSL_CTX_ctrl / SSL_ctrl.
long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type);
long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*callback)(SSL *, void *), void *arg);
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response);

// TrustEvaluation (issue 3): libcrypto's EC_KEY API for ECDSA checks (end of shims.c). OpenSSL 3.0
// deprecates it but keeps it for all of 3.x; it skips the provider dispatch that EVP_PKEY_verify
// pays on every check (a new EVP_PKEY_CTX and a key-management lookup), about 5 µs per P-256
// check on the project machine. `has_EC_KEY` is 0 when libcrypto was built without deprecated
// APIs; the other wrappers then fail and the EVP_PKEY path is used.
struct ec_key_st;
int CServerTrustShims_has_EC_KEY(void);
struct ec_key_st *CServerTrustShims_EC_KEY_new(void);
void CServerTrustShims_EC_KEY_free(struct ec_key_st *key);
int CServerTrustShims_EC_KEY_set_group(struct ec_key_st *key, const EC_GROUP *group);
int CServerTrustShims_EC_KEY_oct2key(struct ec_key_st *key, const unsigned char *buf, size_t len);
int CServerTrustShims_ECDSA_verify(const unsigned char *dgst, int dgstlen, const unsigned char *sig, int siglen, struct ec_key_st *key);

#endif
