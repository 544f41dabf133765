// The parts of yajl 2.1 that Swift uses, plus non-variadic wrappers for the
// variadic `yajl_config`, which Swift cannot call directly.
#ifndef CYAJL_SHIM_H
#define CYAJL_SHIM_H

#include <yajl/yajl_parse.h>
#include <yajl/yajl_version.h>

/// Turns one boolean parser option on or off; returns non-zero on success.
static inline int cyajl_config_flag(yajl_handle handle, yajl_option option, int on) {
  return yajl_config(handle, option, on);
}

#endif
