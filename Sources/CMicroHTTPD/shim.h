#ifndef SERVERTRUST_CMICROHTTPD_SHIM_H
#define SERVERTRUST_CMICROHTTPD_SHIM_H
// Includes only: the wrappers for libmicrohttpd's variadic calls live in CCollectorShims.
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
#endif
