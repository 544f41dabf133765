#!/bin/sh
# Installs what building and testing cbl-attachments needs and is not there yet:
# the yajl C library (Debian libyajl-dev), OpenSSL's libcrypto (libssl-dev), zlib (zlib1g-dev)
# and, for the tests and examples, jq and GNU parallel (the README's _bulk_docs pipeline).
# Runs apt-get only when something is missing; uses sudo when not root.
set -eu
missing=""
[ -f /usr/include/yajl/yajl_parse.h ] || missing="$missing libyajl-dev"
[ -f /usr/include/openssl/evp.h ] || missing="$missing libssl-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
command -v jq >/dev/null 2>&1 || missing="$missing jq"
command -v parallel >/dev/null 2>&1 || missing="$missing parallel"
if [ "${CBL_WITH_TOOLS:-0}" = 1 ]; then
  command -v json_verify >/dev/null 2>&1 || missing="$missing yajl-tools"
  command -v hyperfine >/dev/null 2>&1 || missing="$missing hyperfine"
  command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
  [ -x /usr/bin/time ] || missing="$missing time"
  command -v cc >/dev/null 2>&1 || missing="$missing gcc"
fi
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "installing:$missing" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
