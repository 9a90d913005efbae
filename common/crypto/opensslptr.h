#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

namespace cloop::crypto {

// OpenSSL objects owned like any other: freed by their own function.
template <typename T, auto Free> struct OpenSslFree
{
    void operator()(T *object) const { Free(object); }
};
template <typename T, auto Free> using OpenSslPtr = std::unique_ptr<T, OpenSslFree<T, Free>>;

using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using PkeyPtr = OpenSslPtr<EVP_PKEY, EVP_PKEY_free>;
using X509Ptr = OpenSslPtr<X509, X509_free>;
using DigestContextPtr = OpenSslPtr<EVP_MD_CTX, EVP_MD_CTX_free>;

} // namespace cloop::crypto
