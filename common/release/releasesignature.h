#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace cloop::release {

// What a release signature vouches for: one package file, by its digest,
// as one version of one channel. The channel and version are signed with
// the digest, so a hub cannot offer an edge build as a release, or one
// release as another.
struct ReleaseStatement
{
    QString package; // cloop-agent
    QString version; // 0.2.0, or 0.2.0~git<commit> for an edge build
    QString channel; // stable or edge
    QString commit; // the 40-hex git commit it was built from
    QByteArray sha256; // 32 bytes: the package file's digest

    // The exact bytes that are signed: one "key=value" line per field, in
    // this order, after a header line naming the format.
    QByteArray canonical() const;
    // Refuses a statement with a field out of shape.
    Status check() const;

    friend bool operator==(const ReleaseStatement &, const ReleaseStatement &) = default;
};

// A signed statement as a file beside the package (PACKAGE.deb.sig): the
// statement's canonical text, the key's id and the Ed25519 signature.
struct ReleaseSignature
{
    ReleaseStatement statement;
    QString keyId; // ReleaseKey::id() of the key that signed
    QByteArray signature; // 64 bytes

    QByteArray toFile() const;
    // Refuses anything that is not exactly such a file, saying what is
    // wrong; bounded (kMaxFileBytes).
    static Result<ReleaseSignature> fromFile(const QByteArray &bytes);

    static constexpr qsizetype kMaxFileBytes = 4096;
};

// An Ed25519 release key (OpenSSL's EVP). The public half is installed
// with the packages; the private half stays with whoever builds releases.
class ReleaseKey
{
public:
    // A new private key.
    static Result<ReleaseKey> generate();
    // PEM: a private key (PKCS#8) or a public key (SubjectPublicKeyInfo).
    static Result<ReleaseKey> fromPem(const QByteArray &pem);

    ReleaseKey(ReleaseKey &&) noexcept;
    ReleaseKey &operator=(ReleaseKey &&) noexcept;
    ~ReleaseKey();

    bool isPrivate() const { return m_private; }
    QByteArray privatePem() const; // empty for a public key
    QByteArray publicPem() const;
    // "ed25519:" and the first 16 hex digits of the SHA-256 of the raw
    // public key: names the key in a signature file.
    QString id() const;

    Result<ReleaseSignature> sign(const ReleaseStatement &statement) const;
    // The signature is this key's and is over exactly that statement.
    Status verify(const ReleaseSignature &signature) const;

private:
    struct Handle;
    ReleaseKey(std::unique_ptr<Handle> handle, bool isPrivate);
    std::unique_ptr<Handle> m_handle;
    bool m_private = false;
};

// The release keys a device trusts: the public keys installed with the
// packages (kInstalledKeyDir, one PEM file per key).
class ReleaseKeyring
{
public:
    static constexpr const char *kInstalledKeyDir = "/usr/share/cloop/release-keys";

    // Every *.pem of `dir`; a file that is no Ed25519 public key is an error
    // naming it, not skipped.
    static Result<ReleaseKeyring> fromDirectory(const QString &dir);
    void add(ReleaseKey key);
    bool isEmpty() const { return m_keys.empty(); }
    QStringList ids() const;

    // The package file at `path` is what `signature` states, and one of these
    // keys signed it. The file is read in pieces, never whole.
    Status verifyFile(const QString &path, const ReleaseSignature &signature) const;

private:
    std::vector<ReleaseKey> m_keys;
};

// SHA-256 of a file, read in pieces.
Result<QByteArray> sha256OfFile(const QString &path);

} // namespace cloop::release
