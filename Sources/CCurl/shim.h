// CCurl: the system libcurl (Debian's libcurl4-openssl-dev), plus typed wrappers for what Swift cannot
// call: curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>

/// curl_easy_setopt with a long argument (flags, sizes, milliseconds).
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a curl_off_t argument (large sizes).
static inline CURLcode ccurl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a string argument (libcurl copies strings it keeps).
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a pointer argument (callback data, header lists).
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// The write and header callback shape.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);

/// curl_easy_setopt for CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION.
static inline CURLcode ccurl_easy_setopt_callback(CURL *handle, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// curl_easy_getinfo for a long result (response code, HTTP version).
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for a pointer result (CURLINFO_PRIVATE).
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_multi_setopt with a long argument.
static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/// CURL_WRITEFUNC_PAUSE (a macro Swift cannot import as a size_t).
static inline size_t ccurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }

/// CURL_READFUNC_ABORT.
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

/// CURLPAUSE_CONT.
static inline int ccurl_pause_continue(void) { return CURLPAUSE_CONT; }

#endif
