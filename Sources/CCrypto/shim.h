// OpenSSL's libcrypto (Debian libssl-dev), for the digests (SHA-1, MD5) and base64 of
// attachment bodies. Only the EVP digest interface and the base64 block functions are used.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
