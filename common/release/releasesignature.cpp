#include "common/release/releasesignature.h"

#include "common/crypto/opensslptr.h"
#include "common/release/releaseversion.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <openssl/evp.h>
#include <openssl/pem.h>

namespace cloop::release {

namespace {

constexpr QByteArrayView kHeader { "cloop-release 1" };
constexpr int kSignatureBytes = 64;
constexpr int kRawKeyBytes = 32;

Error invalid(const QString &message)
{
    return Error::make(QStringLiteral("bad_signature_file"), message);
}

using Bio = crypto::BioPtr;
using Key = crypto::PkeyPtr;
using DigestContext = crypto::DigestContextPtr;

QByteArray pemOf(EVP_PKEY *key, bool privateHalf)
{
    Bio out(BIO_new(BIO_s_mem()));
    if (!out)
        return {};
    const int written = privateHalf
        ? PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
        : PEM_write_bio_PUBKEY(out.get(), key);
    if (written != 1)
        return {};
    char *data = nullptr;
    const long size = BIO_get_mem_data(out.get(), &data);
    return QByteArray(data, size);
}

} // namespace

QByteArray ReleaseStatement::canonical() const
{
    QByteArray text = kHeader.toByteArray() + '\n';
    text += "package=" + package.toUtf8() + '\n';
    text += "version=" + version.toUtf8() + '\n';
    text += "channel=" + channel.toUtf8() + '\n';
    text += "commit=" + commit.toUtf8() + '\n';
    text += "sha256=" + sha256.toHex() + '\n';
    return text;
}

Status ReleaseStatement::check() const
{
    static const QRegularExpression packageName(QStringLiteral("\\Acloop(-[a-z]{2,16})?\\z"));
    static const QRegularExpression commitShape(QStringLiteral("\\A[0-9a-f]{40}\\z"));
    if (!packageName.match(package).hasMatch())
        return invalid(QStringLiteral("\"%1\" is not a cloop package").arg(package.left(40)));
    if (!commitShape.match(commit).hasMatch())
        return invalid(QStringLiteral("the commit is not 40 hex digits"));
    if (sha256.size() != 32)
        return invalid(QStringLiteral("the digest is not a SHA-256"));
    const auto parsed = ReleaseVersion::parse(version);
    if (!parsed)
        return invalid(parsed.error().message);
    if (channel == QLatin1String("stable")) {
        if (parsed->isEdge())
            return invalid(
                QStringLiteral("a stable release's version %1 names a build").arg(version));
    } else if (channel == QLatin1String("edge")) {
        if (!parsed->isEdge() || !commit.startsWith(parsed->build()))
            return invalid(
                QStringLiteral("an edge build's version must end in ~git and its commit's first "
                               "12 digits, not %1")
                    .arg(version));
    } else {
        return invalid(
            QStringLiteral("the channel is stable or edge, not \"%1\"").arg(channel.left(20)));
    }
    return {};
}

QByteArray ReleaseSignature::toFile() const
{
    return statement.canonical() + "key=" + keyId.toUtf8() + '\n'
        + "signature=" + signature.toBase64() + '\n';
}

Result<ReleaseSignature> ReleaseSignature::fromFile(const QByteArray &bytes)
{
    if (bytes.size() > kMaxFileBytes)
        return invalid(QStringLiteral("a signature file is at most %1 bytes").arg(kMaxFileBytes));
    if (!bytes.startsWith(kHeader.toByteArray() + '\n'))
        return invalid(QStringLiteral("not a cloop release signature (it begins with \"%1\")")
                           .arg(QLatin1String(kHeader.toByteArray())));
    if (!bytes.endsWith('\n'))
        return invalid(QStringLiteral("the file does not end with a line break"));
    const QList<QByteArray> lines = bytes.chopped(1).split('\n');
    static constexpr const char *keys[]
        = { "package", "version", "channel", "commit", "sha256", "key", "signature" };
    constexpr qsizetype lineCount = 1 + std::size(keys);
    if (lines.size() != lineCount || lines.first() != kHeader)
        return invalid(QStringLiteral("not a cloop release signature (%1 lines of \"key=value\" "
                                      "after \"%2\")")
                           .arg(std::size(keys))
                           .arg(QLatin1String(kHeader.toByteArray())));
    QStringList values;
    for (qsizetype i = 0; i < qsizetype(std::size(keys)); ++i) {
        const QByteArray prefix = QByteArray(keys[i]) + '=';
        const QByteArray &line = lines.at(i + 1);
        if (!line.startsWith(prefix))
            return invalid(
                QStringLiteral("line %1 is not %2=…").arg(i + 2).arg(QLatin1String(keys[i])));
        const QByteArray value = line.mid(prefix.size());
        if (value.contains('\r') || value.contains('\0'))
            return invalid(QStringLiteral("line %1 holds a control character").arg(i + 2));
        values.append(QString::fromUtf8(value));
    }
    ReleaseSignature signature;
    signature.statement.package = values.at(0);
    signature.statement.version = values.at(1);
    signature.statement.channel = values.at(2);
    signature.statement.commit = values.at(3);
    const QByteArray digestHex = values.at(4).toLatin1();
    static const QRegularExpression hex64(QStringLiteral("\\A[0-9a-f]{64}\\z"));
    if (!hex64.match(values.at(4)).hasMatch())
        return invalid(QStringLiteral("sha256 is not 64 lowercase hex digits"));
    signature.statement.sha256 = QByteArray::fromHex(digestHex);
    signature.keyId = values.at(5);
    const auto decoded = QByteArray::fromBase64Encoding(
        values.at(6).toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.size() != kSignatureBytes)
        return invalid(QStringLiteral("the signature is not 64 bytes of base64"));
    signature.signature = decoded.decoded;
    if (Status checked = signature.statement.check(); !checked)
        return checked.error();
    // Written back, it must be the very bytes read: one file, one reading.
    if (signature.toFile() != bytes)
        return invalid(QStringLiteral("the file is not in its canonical form"));
    return signature;
}

struct ReleaseKey::Handle
{
    Key key;
};

ReleaseKey::ReleaseKey(std::unique_ptr<Handle> handle, bool isPrivate)
    : m_handle(std::move(handle))
    , m_private(isPrivate)
{ }
ReleaseKey::ReleaseKey(ReleaseKey &&) noexcept = default;
ReleaseKey &ReleaseKey::operator=(ReleaseKey &&) noexcept = default;
ReleaseKey::~ReleaseKey() = default;

Result<ReleaseKey> ReleaseKey::generate()
{
    Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
    if (!key)
        return Error::make(QStringLiteral("crypto"), QStringLiteral("cannot make an Ed25519 key"));
    return ReleaseKey(std::make_unique<Handle>(Handle { std::move(key) }), true);
}

Result<ReleaseKey> ReleaseKey::fromPem(const QByteArray &pem)
{
    const bool privateHalf = pem.contains("-----BEGIN PRIVATE KEY-----");
    Bio in(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    if (!in)
        return Error::make(QStringLiteral("crypto"), QStringLiteral("out of memory"));
    Key key(privateHalf ? PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr)
                        : PEM_read_bio_PUBKEY(in.get(), nullptr, nullptr, nullptr));
    if (!key)
        return Error::make(QStringLiteral("bad_key"),
            QStringLiteral("not a PEM private key (PKCS#8) or public key"));
    if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519)
        return Error::make(QStringLiteral("bad_key"), QStringLiteral("not an Ed25519 key"));
    return ReleaseKey(std::make_unique<Handle>(Handle { std::move(key) }), privateHalf);
}

QByteArray ReleaseKey::privatePem() const
{
    return m_private ? pemOf(m_handle->key.get(), true) : QByteArray();
}

QByteArray ReleaseKey::publicPem() const
{
    return pemOf(m_handle->key.get(), false);
}

QString ReleaseKey::id() const
{
    unsigned char raw[kRawKeyBytes];
    size_t size = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(m_handle->key.get(), raw, &size) != 1)
        return {};
    QByteArray digest(EVP_MAX_MD_SIZE, Qt::Uninitialized);
    unsigned int digestSize = 0;
    EVP_Digest(raw, size, reinterpret_cast<unsigned char *>(digest.data()), &digestSize,
        EVP_sha256(), nullptr);
    return QStringLiteral("ed25519:") + QString::fromLatin1(digest.left(8).toHex());
}

Result<ReleaseSignature> ReleaseKey::sign(const ReleaseStatement &statement) const
{
    if (!m_private)
        return Error::make(QStringLiteral("bad_key"), QStringLiteral("a public key cannot sign"));
    if (Status checked = statement.check(); !checked)
        return checked.error();
    const QByteArray message = statement.canonical();
    DigestContext context(EVP_MD_CTX_new());
    QByteArray signature(kSignatureBytes, Qt::Uninitialized);
    size_t size = size_t(signature.size());
    if (!context
        || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, m_handle->key.get()) != 1
        || EVP_DigestSign(context.get(), reinterpret_cast<unsigned char *>(signature.data()), &size,
               reinterpret_cast<const unsigned char *>(message.constData()), size_t(message.size()))
            != 1)
        return Error::make(QStringLiteral("crypto"), QStringLiteral("signing failed"));
    return ReleaseSignature { statement, id(), signature.left(qsizetype(size)) };
}

Status ReleaseKey::verify(const ReleaseSignature &signature) const
{
    if (signature.keyId != id())
        return Error::make(QStringLiteral("wrong_key"),
            QStringLiteral("signed by %1, not by %2").arg(signature.keyId.left(40), id()));
    const QByteArray message = signature.statement.canonical();
    DigestContext context(EVP_MD_CTX_new());
    if (!context
        || EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, m_handle->key.get()) != 1
        || EVP_DigestVerify(context.get(),
               reinterpret_cast<const unsigned char *>(signature.signature.constData()),
               size_t(signature.signature.size()),
               reinterpret_cast<const unsigned char *>(message.constData()), size_t(message.size()))
            != 1)
        return Error::make(QStringLiteral("bad_signature"),
            QStringLiteral("the signature of %1 %2 does not verify with key %3")
                .arg(signature.statement.package, signature.statement.version, id()));
    return {};
}

Result<ReleaseKeyring> ReleaseKeyring::fromDirectory(const QString &dir)
{
    ReleaseKeyring keyring;
    const QFileInfoList files
        = QDir(dir).entryInfoList({ QStringLiteral("*.pem") }, QDir::Files, QDir::Name);
    for (const QFileInfo &info : files) {
        QFile file(info.filePath());
        if (!file.open(QIODevice::ReadOnly))
            return Error::make(QStringLiteral("bad_key"),
                QStringLiteral("cannot read %1: %2").arg(info.filePath(), file.errorString()));
        auto key = ReleaseKey::fromPem(file.read(64 * 1024));
        if (!key)
            return Error::make(QStringLiteral("bad_key"),
                QStringLiteral("%1: %2").arg(info.filePath(), key.error().message));
        if (key->isPrivate())
            return Error::make(QStringLiteral("bad_key"),
                QStringLiteral("%1 is a private key: only public keys belong there")
                    .arg(info.filePath()));
        keyring.add(std::move(*key));
    }
    return keyring;
}

void ReleaseKeyring::add(ReleaseKey key)
{
    m_keys.push_back(std::move(key));
}

QStringList ReleaseKeyring::ids() const
{
    QStringList ids;
    for (const ReleaseKey &key : m_keys)
        ids.append(key.id());
    return ids;
}

Status ReleaseKeyring::verifyFile(const QString &path, const ReleaseSignature &signature) const
{
    const ReleaseKey *signer = nullptr;
    for (const ReleaseKey &key : m_keys) {
        if (key.id() == signature.keyId)
            signer = &key;
    }
    if (!signer)
        return Error::make(QStringLiteral("unknown_key"),
            QStringLiteral("%1 %2 is signed by %3, which is not a release key of this machine "
                           "(%4)")
                .arg(signature.statement.package, signature.statement.version,
                    signature.keyId.left(40),
                    m_keys.empty() ? QStringLiteral("it has none") : ids().join(u", ")));
    if (Status verified = signer->verify(signature); !verified)
        return verified;
    const auto digest = sha256OfFile(path);
    if (!digest)
        return digest.error();
    if (*digest != signature.statement.sha256)
        return Error::make(QStringLiteral("bad_digest"),
            QStringLiteral("%1 is not the file the signature vouches for (its SHA-256 differs)")
                .arg(path));
    return {};
}

Result<QByteArray> sha256OfFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("io"),
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    DigestContext context(EVP_MD_CTX_new());
    if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
        return Error::make(QStringLiteral("crypto"), QStringLiteral("no SHA-256"));
    QByteArray buffer(256 * 1024, Qt::Uninitialized);
    for (;;) {
        const qint64 read = file.read(buffer.data(), buffer.size());
        if (read < 0)
            return Error::make(QStringLiteral("io"),
                QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
        if (read == 0)
            break;
        EVP_DigestUpdate(context.get(), buffer.constData(), size_t(read));
    }
    QByteArray digest(EVP_MAX_MD_SIZE, Qt::Uninitialized);
    unsigned int size = 0;
    EVP_DigestFinal_ex(context.get(), reinterpret_cast<unsigned char *>(digest.data()), &size);
    return digest.left(int(size));
}

} // namespace cloop::release
