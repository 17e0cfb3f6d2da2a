#ifndef SERVERTRUST_CCURL_SHIM_H
#define SERVERTRUST_CCURL_SHIM_H
#include <curl/curl.h>
#endif
