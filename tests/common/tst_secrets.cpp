// Unit tests of the typed secrets (common/crypto/secrets.h).

#include "common/crypto/secrets.h"

#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace cloop::secrets;

Q_DECLARE_METATYPE(cloop::secrets::SecretKind)

class TestSecrets final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void generateHasPrefixAndBody_data();
    void generateHasPrefixAndBody();
    void generateNeverRepeats();
    void kindOfRecognisesEachKind_data();
    void kindOfRecognisesEachKind();
    void describeNamesTheKind();
    void sha256KnownVectors_data();
    void sha256KnownVectors();
    void constantTimeEquals_data();
    void constantTimeEquals();
};

static void addKinds()
{
    QTest::addColumn<SecretKind>("kind");
    QTest::addColumn<QString>("prefix");
    QTest::newRow("forwarder enrollment token")
        << SecretKind::ForwarderEnrollmentToken << QStringLiteral("cft_");
    QTest::newRow("forwarder credential")
        << SecretKind::ForwarderCredential << QStringLiteral("cfc_");
    QTest::newRow("agent enrollment token")
        << SecretKind::AgentEnrollmentToken << QStringLiteral("cet_");
    QTest::newRow("agent credential") << SecretKind::AgentCredential << QStringLiteral("cec_");
    QTest::newRow("api token") << SecretKind::ApiToken << QStringLiteral("cat_");
}

void TestSecrets::generateHasPrefixAndBody_data()
{
    addKinds();
}

void TestSecrets::generateHasPrefixAndBody()
{
    QFETCH(SecretKind, kind);
    QFETCH(QString, prefix);

    QCOMPARE(prefixFor(kind), prefix);
    const QString secret = generate(kind);
    // prefix + 256 bits as unpadded base64url = 43 characters.
    QVERIFY2(secret.startsWith(prefix), qPrintable(secret));
    const QString body = secret.mid(prefix.size());
    QCOMPARE(body.size(), 43);
    static const QRegularExpression base64url(QStringLiteral("^[A-Za-z0-9_-]{43}$"));
    QVERIFY2(base64url.match(body).hasMatch(), qPrintable(body));
    // And the body decodes back to 32 bytes.
    const auto decoded = QByteArray::fromBase64Encoding(
        body.toLatin1(), QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
    QVERIFY(decoded);
    QCOMPARE(decoded.decoded.size(), 32);
    QCOMPARE(kindOf(secret), kind);
}

void TestSecrets::generateNeverRepeats()
{
    QCOMPARE_NE(generate(SecretKind::ApiToken), generate(SecretKind::ApiToken));
    QSet<QString> seen;
    for (int i = 0; i < 200; ++i)
        seen.insert(generate(SecretKind::ForwarderCredential));
    QCOMPARE(seen.size(), 200);
}

void TestSecrets::kindOfRecognisesEachKind_data()
{
    addKinds();
}

void TestSecrets::kindOfRecognisesEachKind()
{
    QFETCH(SecretKind, kind);
    QFETCH(QString, prefix);
    QCOMPARE(kindOf(prefix + QStringLiteral("abc")), kind);
    QCOMPARE(kindOf(generate(kind)), kind);
    // Prefixes are case-sensitive and must be whole.
    QCOMPARE(kindOf(prefix.toUpper() + QStringLiteral("abc")), SecretKind::Unknown);
    QCOMPARE(kindOf(prefix.chopped(1)), SecretKind::Unknown);
    QCOMPARE(kindOf(QStringLiteral("x") + prefix + QStringLiteral("abc")), SecretKind::Unknown);
}

void TestSecrets::describeNamesTheKind()
{
    QCOMPARE(kindOf(QString()), SecretKind::Unknown);
    QCOMPARE(kindOf(QStringLiteral("ghp_abc")), SecretKind::Unknown);
    QCOMPARE(prefixFor(SecretKind::Unknown), QString());
    QCOMPARE(describe(SecretKind::ForwarderEnrollmentToken),
        QStringLiteral("a forwarder enrollment token"));
    QCOMPARE(describe(SecretKind::AgentCredential), QStringLiteral("an executor credential"));
    QCOMPARE(describe(SecretKind::Unknown), QStringLiteral("an unrecognised secret"));
}

void TestSecrets::sha256KnownVectors_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("hex");
    // FIPS 180-2 test vectors.
    QTest::newRow("abc") << QStringLiteral("abc")
                         << QStringLiteral(
                                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    QTest::newRow("empty")
        << QString()
        << QStringLiteral("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    QTest::newRow("two blocks")
        << QStringLiteral("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        << QStringLiteral("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // The hex is of the UTF-8 bytes (U+00E9 = c3 a9).
    QTest::newRow("non-ASCII as UTF-8")
        << QStringLiteral("\u00e9")
        << QStringLiteral("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
}

void TestSecrets::sha256KnownVectors()
{
    QFETCH(QString, input);
    QFETCH(QString, hex);
    QCOMPARE(sha256Hex(input), hex);
    QCOMPARE(sha256(input.toUtf8()).toHex(), hex.toLatin1());
    QCOMPARE(sha256(input.toUtf8()).size(), 32);
}

void TestSecrets::constantTimeEquals_data()
{
    QTest::addColumn<QByteArray>("a");
    QTest::addColumn<QByteArray>("b");
    QTest::addColumn<bool>("equal");
    QTest::newRow("same") << QByteArrayLiteral("cfc_secret") << QByteArrayLiteral("cfc_secret")
                          << true;
    QTest::newRow("both empty") << QByteArray() << QByteArray() << true;
    QTest::newRow("last byte differs")
        << QByteArrayLiteral("cfc_secret") << QByteArrayLiteral("cfc_secreu") << false;
    QTest::newRow("first byte differs")
        << QByteArrayLiteral("xfc_secret") << QByteArrayLiteral("cfc_secret") << false;
    QTest::newRow("high bit differs")
        << QByteArrayLiteral("\x80") << QByteArrayLiteral("\x00") << false;
    QTest::newRow("prefix of the other")
        << QByteArrayLiteral("cfc_") << QByteArrayLiteral("cfc_secret") << false;
    QTest::newRow("empty vs non-empty") << QByteArray() << QByteArrayLiteral("a") << false;
    QTest::newRow("embedded zero")
        << QByteArrayLiteral("a\0b") << QByteArrayLiteral("a\0c") << false;
}

void TestSecrets::constantTimeEquals()
{
    QFETCH(QByteArray, a);
    QFETCH(QByteArray, b);
    QFETCH(bool, equal);
    QCOMPARE(cloop::secrets::constantTimeEquals(a, b), equal);
    QCOMPARE(cloop::secrets::constantTimeEquals(b, a), equal);
}

QTEST_GUILESS_MAIN(TestSecrets)
#include "tst_secrets.moc"
