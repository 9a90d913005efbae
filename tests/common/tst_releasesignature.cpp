// Unit: release signatures (Ed25519 through OpenSSL's EVP) over a package
// file's statement, the signature file's one canonical form, and the
// keyring a device verifies with. Signatures are checked against the
// openssl command line both ways, so they are plain Ed25519 that any
// implementation reads.

#include "common/release/releasesignature.h"
#include "support/verifyresult.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::release;
using namespace Qt::StringLiterals;

class TestReleaseSignature final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void signsAndVerifiesAFile();
    void aChangedFileOrStatementIsRefused();
    void anotherKeyIsRefused();
    void theFileHasOneForm();
    void theFileRefusesMalformedInput_data();
    void theFileRefusesMalformedInput();
    void statementsAreChecked_data();
    void statementsAreChecked();
    void keysRoundTripThroughPem();
    void theKeyringReadsADirectory();
    void interoperatesWithTheOpensslCommandLine();

private:
    QString writeFile(const QString &name, const QByteArray &bytes);
    ReleaseStatement statementFor(const QString &path) const;

    QTemporaryDir m_dir;
    std::optional<ReleaseKey> m_key;
};

namespace {

const QString kCommit = u"0123456789abcdef0123456789abcdef01234567"_s;

} // namespace

void TestReleaseSignature::initTestCase()
{
    QVERIFY(m_dir.isValid());
    auto key = ReleaseKey::generate();
    CLOOP_VERIFY_OK(key);
    m_key.emplace(std::move(*key));
}

QString TestReleaseSignature::writeFile(const QString &name, const QByteArray &bytes)
{
    const QString path = m_dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
        return {};
    return path;
}

ReleaseStatement TestReleaseSignature::statementFor(const QString &path) const
{
    ReleaseStatement statement;
    statement.package = u"cloop-agent"_s;
    statement.version = u"0.2.0"_s;
    statement.channel = u"stable"_s;
    statement.commit = kCommit;
    if (auto digest = sha256OfFile(path))
        statement.sha256 = *digest;
    return statement;
}

void TestReleaseSignature::signsAndVerifiesAFile()
{
    // A package larger than one read, so the digest runs over pieces.
    QByteArray package(700 * 1024, '\0');
    for (qsizetype i = 0; i < package.size(); ++i)
        package[i] = char(i * 31 % 251);
    const QString path = writeFile(u"cloop-agent_0.2.0-1_amd64.deb"_s, package);
    QVERIFY(!path.isEmpty());
    const auto signature = m_key->sign(statementFor(path));
    CLOOP_VERIFY_OK(signature);
    QCOMPARE(signature->signature.size(), 64);
    QCOMPARE(signature->keyId, m_key->id());
    QVERIFY(m_key->id().startsWith("ed25519:"_L1));
    QCOMPARE(m_key->id().size(), 8 + 16);

    ReleaseKeyring keyring;
    keyring.add(ReleaseKey::fromPem(m_key->publicPem()).value());
    const Status verified = keyring.verifyFile(path, *signature);
    CLOOP_VERIFY_OK(verified);
}

void TestReleaseSignature::aChangedFileOrStatementIsRefused()
{
    const QString path = writeFile(u"a.deb"_s, "the package");
    const auto signature = m_key->sign(statementFor(path));
    QVERIFY(signature);
    ReleaseKeyring keyring;
    keyring.add(ReleaseKey::fromPem(m_key->publicPem()).value());

    // One byte of the file changed.
    const QString changed = writeFile(u"b.deb"_s, "the packagf");
    const Status onChanged = keyring.verifyFile(changed, *signature);
    QVERIFY(!onChanged);
    QCOMPARE(onChanged.error().code, u"bad_digest"_s);

    // The statement relabelled: another version, channel or package, or the
    // digest of another file, no longer verifies.
    for (const auto &relabel : std::initializer_list<std::function<void(ReleaseStatement &)>> {
             [](ReleaseStatement &s) { s.version = u"0.3.0"_s; },
             [](ReleaseStatement &s) { s.package = u"cloop-forward"_s; },
             [](ReleaseStatement &s) { s.commit = QString(40, u'f'); },
             [&](ReleaseStatement &s) { s.sha256 = *sha256OfFile(changed); } }) {
        ReleaseSignature forged = *signature;
        relabel(forged.statement);
        const Status refused = keyring.verifyFile(changed, forged);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, u"bad_signature"_s);
    }
    // A flipped bit of the signature.
    ReleaseSignature flipped = *signature;
    flipped.signature[10] = char(flipped.signature.at(10) ^ 0x01);
    QCOMPARE(keyring.verifyFile(path, flipped).error().code, u"bad_signature"_s);
    // Nothing missing: the original still verifies.
    QVERIFY(keyring.verifyFile(path, *signature));
}

void TestReleaseSignature::anotherKeyIsRefused()
{
    const QString path = writeFile(u"c.deb"_s, "another package");
    auto stranger = ReleaseKey::generate();
    QVERIFY(stranger);
    const auto signature = stranger->sign(statementFor(path));
    QVERIFY(signature);

    ReleaseKeyring keyring;
    keyring.add(ReleaseKey::fromPem(m_key->publicPem()).value());
    const Status unknown = keyring.verifyFile(path, *signature);
    QCOMPARE(unknown.error().code, u"unknown_key"_s);
    QVERIFY2(unknown.error().message.contains(stranger->id()), qPrintable(unknown.error().message));

    // A signature naming our key but made by the stranger.
    ReleaseSignature impostor = *signature;
    impostor.keyId = m_key->id();
    QCOMPARE(keyring.verifyFile(path, impostor).error().code, u"bad_signature"_s);

    // An empty keyring trusts nothing, and says so.
    const Status none = ReleaseKeyring().verifyFile(path, *signature);
    QVERIFY(none.error().message.contains("it has none"_L1));

    // A public key cannot sign.
    QVERIFY(!ReleaseKey::fromPem(m_key->publicPem())->sign(statementFor(path)));
}

void TestReleaseSignature::theFileHasOneForm()
{
    const QString path = writeFile(u"d.deb"_s, "package d");
    const auto signature = m_key->sign(statementFor(path));
    QVERIFY(signature);
    const QByteArray file = signature->toFile();
    QVERIFY(file.startsWith("cloop-release 1\npackage=cloop-agent\nversion=0.2.0\n"));
    const auto read = ReleaseSignature::fromFile(file);
    CLOOP_VERIFY_OK(read);
    QCOMPARE(read->statement, signature->statement);
    QCOMPARE(read->keyId, signature->keyId);
    QCOMPARE(read->signature, signature->signature);
    QCOMPARE(read->toFile(), file);
}

void TestReleaseSignature::theFileRefusesMalformedInput_data()
{
    QTest::addColumn<QByteArray>("edit"); // "from\x1fto", applied once
    QTest::newRow("empty") << QByteArray("\x1f");
    QTest::newRow("another header") << QByteArray("cloop-release 1\x1f"
                                                  "cloop-release 2");
    QTest::newRow("a line missing") << QByteArray("channel=stable\n\x1f");
    QTest::newRow("a line added") << QByteArray("channel=stable\n\x1f"
                                                "channel=stable\nextra=1\n");
    QTest::newRow("keys swapped") << QByteArray("package=\x1f"
                                                "pakcage=");
    QTest::newRow("CRLF") << QByteArray("channel=stable\n\x1f"
                                        "channel=stable\r\n");
    QTest::newRow("uppercase digest") << QByteArray("sha256=\x1f"
                                                    "sha256=A");
    QTest::newRow("short signature") << QByteArray("signature=\x1f"
                                                   "signature=AAAA");
    QTest::newRow("no final newline") << QByteArray("==\n\x1f==");
    QTest::newRow("unknown channel") << QByteArray("channel=stable\x1f"
                                                   "channel=nightly");
    QTest::newRow("version with spaces") << QByteArray("version=0.2.0\x1f"
                                                       "version=0.2.0 ");
    QTest::newRow("a build on stable") << QByteArray("version=0.2.0\x1f"
                                                     "version=0.2.0~git0123456789ab");
    QTest::newRow("short commit") << QByteArray("commit=0123456789abcdef\x1f"
                                                "commit=0123");
    QTest::newRow("oversized") << QByteArray(
        "signature=\x1f" + QByteArray(5000, 'A') + "signature=");
}

void TestReleaseSignature::theFileRefusesMalformedInput()
{
    QFETCH(QByteArray, edit);
    const QString path = writeFile(u"e.deb"_s, "package e");
    const auto signature = m_key->sign(statementFor(path));
    QVERIFY(signature);
    QByteArray file = signature->toFile();
    const qsizetype separator = edit.indexOf('\x1f');
    const QByteArray from = edit.left(separator);
    const QByteArray to = edit.mid(separator + 1);
    if (from.isEmpty())
        file = to;
    else if (from == "==\n")
        file.chop(1);
    else {
        QVERIFY2(file.contains(from), from.constData());
        file.replace(file.indexOf(from), from.size(), to);
    }
    const auto read = ReleaseSignature::fromFile(file);
    QVERIFY2(!read, file.constData());
    QCOMPARE(read.error().code, u"bad_signature_file"_s);
    QVERIFY(!read.error().message.isEmpty());
}

void TestReleaseSignature::statementsAreChecked_data()
{
    QTest::addColumn<QString>("package");
    QTest::addColumn<QString>("version");
    QTest::addColumn<QString>("channel");
    QTest::addColumn<bool>("valid");
    const QString build = u"0.3.0~git"_s + kCommit.left(12);
    QTest::newRow("release") << u"cloop-hub"_s << u"1.0.0"_s << u"stable"_s << true;
    QTest::newRow("edge build") << u"cloop"_s << build << u"edge"_s << true;
    QTest::newRow("edge build of another commit")
        << u"cloop"_s << u"0.3.0~gitffffffffffff"_s << u"edge"_s << false;
    QTest::newRow("release on edge") << u"cloop"_s << u"0.3.0"_s << u"edge"_s << false;
    QTest::newRow("build on stable") << u"cloop"_s << build << u"stable"_s << false;
    QTest::newRow("not ours") << u"openssl"_s << u"1.0.0"_s << u"stable"_s << false;
    QTest::newRow("leading zero") << u"cloop"_s << u"01.0.0"_s << u"stable"_s << false;
}

void TestReleaseSignature::statementsAreChecked()
{
    QFETCH(QString, package);
    QFETCH(QString, version);
    QFETCH(QString, channel);
    QFETCH(bool, valid);
    ReleaseStatement statement { package, version, channel, kCommit, QByteArray(32, 'x') };
    QCOMPARE(bool(statement.check()), valid);
    QCOMPARE(bool(m_key->sign(statement)), valid);
}

void TestReleaseSignature::keysRoundTripThroughPem()
{
    const QByteArray privatePem = m_key->privatePem();
    QVERIFY(privatePem.startsWith("-----BEGIN PRIVATE KEY-----"));
    const auto again = ReleaseKey::fromPem(privatePem);
    QVERIFY(again && again->isPrivate());
    QCOMPARE(again->id(), m_key->id());
    const auto publicHalf = ReleaseKey::fromPem(m_key->publicPem());
    QVERIFY(publicHalf && !publicHalf->isPrivate());
    QCOMPARE(publicHalf->id(), m_key->id());
    QVERIFY(publicHalf->privatePem().isEmpty());
    QCOMPARE(ReleaseKey::fromPem("garbage").error().code, u"bad_key"_s);
    QCOMPARE(ReleaseKey::fromPem({}).error().code, u"bad_key"_s);
}

void TestReleaseSignature::theKeyringReadsADirectory()
{
    QTemporaryDir keys;
    QVERIFY(keys.isValid());
    auto second = ReleaseKey::generate();
    QVERIFY(second);
    QFile(keys.filePath(u"README"_s)).open(QIODevice::WriteOnly); // not a key: not read
    for (const auto &[name, pem] : { std::pair { u"a.pem"_s, m_key->publicPem() },
             std::pair { u"b.pem"_s, second->publicPem() } }) {
        QFile file(keys.filePath(name));
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write(pem) == pem.size());
    }
    const auto keyring = ReleaseKeyring::fromDirectory(keys.path());
    CLOOP_VERIFY_OK(keyring);
    QCOMPARE(keyring->ids(), (QStringList { m_key->id(), second->id() }));

    // A private key, or a file that is no key, is an error naming it.
    for (const QByteArray &bad : { second->privatePem(), QByteArray("not a key") }) {
        QFile file(keys.filePath(u"c.pem"_s));
        QVERIFY(
            file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bad) == bad.size());
        file.close();
        const auto refused = ReleaseKeyring::fromDirectory(keys.path());
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(u"c.pem"_s), qPrintable(refused.error().message));
    }
    // No directory: no key.
    QVERIFY(ReleaseKeyring::fromDirectory(keys.filePath(u"none"_s))->isEmpty());
}

void TestReleaseSignature::interoperatesWithTheOpensslCommandLine()
{
    const QString openssl = qEnvironmentVariable("CLOOP_OPENSSL");
    if (openssl.isEmpty())
        QSKIP("the openssl command line is not installed");
    const QString path = writeFile(u"f.deb"_s, "package f");
    const auto signature = m_key->sign(statementFor(path));
    QVERIFY(signature);
    const QString message = writeFile(u"statement"_s, signature->statement.canonical());
    const QString publicKey = writeFile(u"public.pem"_s, m_key->publicPem());
    const QString signatureFile = writeFile(u"signature.bin"_s, signature->signature);
    const auto run = [&](const QStringList &arguments) {
        QProcess process;
        process.start(openssl, arguments);
        process.waitForFinished(20000);
        return std::pair { process.exitCode(), process.readAllStandardOutput() };
    };

    // Ours, verified by openssl.
    const auto [verified, out] = run({ u"pkeyutl"_s, u"-verify"_s, u"-pubin"_s, u"-inkey"_s,
        publicKey, u"-rawin"_s, u"-in"_s, message, u"-sigfile"_s, signatureFile });
    QCOMPARE(verified, 0);
    QVERIFY(out.contains("Signature Verified Successfully"));

    // openssl's, verified by ours.
    const QString privateKey = writeFile(u"private.pem"_s, m_key->privatePem());
    const QString theirs = m_dir.filePath(u"theirs.bin"_s);
    QCOMPARE(run({ u"pkeyutl"_s, u"-sign"_s, u"-inkey"_s, privateKey, u"-rawin"_s, u"-in"_s,
                     message, u"-out"_s, theirs })
                 .first,
        0);
    QFile theirFile(theirs);
    QVERIFY(theirFile.open(QIODevice::ReadOnly));
    ReleaseSignature fromOpenssl = *signature;
    fromOpenssl.signature = theirFile.readAll();
    QVERIFY(m_key->verify(fromOpenssl));
}

QTEST_GUILESS_MAIN(TestReleaseSignature)
#include "tst_releasesignature.moc"
