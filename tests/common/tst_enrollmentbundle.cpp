// Unit tests of the enrollment bundle (common/identity/enrollmentbundle.h):
// the one-line paste that carries hub URL, one-time token and pins. Every way
// a paste gets mangled must be told apart from a valid bundle, with a message
// that says what went wrong.

#include "common/identity/enrollmentbundle.h"

#include "common/crypto/secrets.h"
#include "common/net/huburls.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::identity;

namespace {

const QString kAlphabet
    = QStringLiteral("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");

QString pinOf(const char *seed)
{
    return QStringLiteral("sha256:")
        + QString::fromLatin1(secrets::sha256(QByteArrayView(seed)).toBase64());
}

EnrollmentBundle forwarderBundle()
{
    EnrollmentBundle bundle;
    bundle.kind = EnrollmentBundle::Kind::Forwarder;
    bundle.hub = QUrl(QStringLiteral("wss://hub.example.com:8443"));
    bundle.token = secrets::generate(secrets::SecretKind::ForwarderEnrollmentToken);
    bundle.pins = pinOf("old key") + QLatin1Char(',') + pinOf("new key");
    return bundle;
}

EnrollmentBundle executorBundle()
{
    EnrollmentBundle bundle;
    bundle.kind = EnrollmentBundle::Kind::Executor;
    bundle.hub = QUrl(QStringLiteral("https://10.1.2.3:9000"));
    bundle.token = secrets::generate(secrets::SecretKind::AgentEnrollmentToken);
    bundle.pins = pinOf("hub key");
    return bundle;
}

// A bundle of any JSON body, with the right prefix and checksum, as a hub of
// this or an earlier version (or a hand) could have made it.
QString bundleOfBody(const QJsonObject &body, EnrollmentBundle::Kind kind)
{
    const QString prefix = EnrollmentBundle::prefixFor(kind);
    const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
    const QByteArray raw = json + secrets::sha256(prefix.toLatin1() + json).left(4);
    return prefix
        + QString::fromLatin1(
            raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

// The JSON body a bundle carries.
QJsonObject bodyOf(const QString &text, EnrollmentBundle::Kind kind)
{
    const QByteArray raw
        = QByteArray::fromBase64(text.mid(EnrollmentBundle::prefixFor(kind).size()).toLatin1(),
            QByteArray::Base64UrlEncoding);
    return QJsonDocument::fromJson(raw.chopped(4)).object();
}

QList<QUrl> urls(const QStringList &texts)
{
    QList<QUrl> list;
    for (const QString &text : texts)
        list.append(QUrl(text));
    return list;
}

// Decodes and requires an invalid_bundle error whose message holds `problem`.
void expectRefused(const QString &text, EnrollmentBundle::Kind kind, const QString &problem,
    QString *message = nullptr)
{
    const auto decoded = EnrollmentBundle::decode(text, kind);
    QVERIFY2(!decoded.ok(), qPrintable(QStringLiteral("accepted: ") + text));
    QCOMPARE(decoded.error().code, QStringLiteral("invalid_bundle"));
    QVERIFY(decoded.error().permanent);
    QVERIFY2(decoded.error().message.contains(problem),
        qPrintable(QStringLiteral("message \"%1\" does not say \"%2\"")
                       .arg(decoded.error().message, problem)));
    if (message)
        *message = decoded.error().message;
}

} // namespace

class TestEnrollmentBundle final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void toleratesWrappingAndSpaces();
    void refusesTruncated();
    void refusesSingleChangedCharacter();
    void refusesCharacterOutsideAlphabet_data();
    void refusesCharacterOutsideAlphabet();
    void refusesWrongPrefix();
    void refusesOtherKind();
    void refusesEmpty();
    void refusesOverlong();
    void refusesBadContentWithValidChecksum();
    void refusesEmptyPin_data();
    void refusesEmptyPin();
    void severalHubsRoundTrip();
    void bundleOfOneHubKeepsItsEarlierForm();
    void refusesBadHubLists_data();
    void refusesBadHubLists();
    void problemsHaveDistinctMessages();
    void tokenFileCommandKeepsTheBundleOffCommandLines();
};

void TestEnrollmentBundle::roundTrip_data()
{
    QTest::addColumn<bool>("forwarder");
    QTest::addColumn<bool>("withPins");
    // A bundle without a pin decodes only where CA-only trust was chosen
    // (refusesEmptyPin shows the default).
    QTest::newRow("forwarder, two pins") << true << true;
    QTest::newRow("forwarder, no pin, pin optional") << true << false;
    QTest::newRow("executor, one pin") << false << true;
}

void TestEnrollmentBundle::roundTrip()
{
    QFETCH(bool, forwarder);
    QFETCH(bool, withPins);

    EnrollmentBundle bundle = forwarder ? forwarderBundle() : executorBundle();
    if (!withPins)
        bundle.pins.clear();

    // When encoded, then it is one line: the kind's prefix and base64url.
    const QString text = bundle.encode();
    const QString prefix = EnrollmentBundle::prefixFor(bundle.kind);
    QCOMPARE(prefix, forwarder ? QStringLiteral("cloopfwd1.") : QStringLiteral("cloopexe1."));
    QVERIFY(text.startsWith(prefix));
    const QString body = text.mid(prefix.size());
    QVERIFY(!body.isEmpty());
    for (const QChar c : body)
        QVERIFY2(kAlphabet.contains(c), qPrintable(text));

    // When decoded, then every field comes back.
    const auto decoded = EnrollmentBundle::decode(text, bundle.kind,
        withPins ? net::PinRequirement::Required : net::PinRequirement::Optional);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->kind, bundle.kind);
    QCOMPARE(decoded->hub, bundle.hub);
    QCOMPARE(decoded->token, bundle.token);
    QCOMPARE(decoded->pins, bundle.pins);
    // And two bundles with different tokens differ.
    EnrollmentBundle other = bundle;
    other.token = secrets::generate(forwarder ? secrets::SecretKind::ForwarderEnrollmentToken
                                              : secrets::SecretKind::AgentEnrollmentToken);
    QCOMPARE_NE(other.encode(), text);
}

void TestEnrollmentBundle::toleratesWrappingAndSpaces()
{
    const EnrollmentBundle bundle = forwarderBundle();
    const QString text = bundle.encode();

    // Given the bundle wrapped by a chat window or mail client,
    QString wrapped = QStringLiteral("  \n");
    for (qsizetype i = 0; i < text.size(); i += 17)
        wrapped += text.mid(i, 17) + (i % 2 ? QStringLiteral("\r\n") : QStringLiteral(" \t\n "));
    wrapped += QStringLiteral("\n");
    QVERIFY(wrapped.contains(QLatin1Char('\n')));

    // then it decodes to the same bundle.
    const auto decoded = EnrollmentBundle::decode(wrapped, EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->token, bundle.token);
    QCOMPARE(decoded->hub, bundle.hub);
    QCOMPARE(decoded->pins, bundle.pins);
}

void TestEnrollmentBundle::refusesTruncated()
{
    const QString text = forwarderBundle().encode();
    const qsizetype prefixSize
        = EnrollmentBundle::prefixFor(EnrollmentBundle::Kind::Forwarder).size();
    // Every cut that keeps the prefix: near the start, in the middle, and
    // across each of the four base64 phases near the end (where the checksum is).
    QList<qsizetype> cuts { prefixSize, prefixSize + 1, prefixSize + 2, prefixSize + 3,
        prefixSize + 8, text.size() / 2 };
    for (qsizetype missing = 1; missing <= 8; ++missing)
        cuts.append(text.size() - missing);
    for (const qsizetype cut : std::as_const(cuts)) {
        const QString truncated = text.left(cut);
        expectRefused(truncated, EnrollmentBundle::Kind::Forwarder, QStringLiteral("truncated"));
        if (QTest::currentTestFailed())
            QFAIL(
                qPrintable(QStringLiteral("cut at %1 of %2 characters").arg(cut).arg(text.size())));
    }
}

void TestEnrollmentBundle::refusesSingleChangedCharacter()
{
    const QString text = forwarderBundle().encode();
    const qsizetype prefixSize
        = EnrollmentBundle::prefixFor(EnrollmentBundle::Kind::Forwarder).size();
    // Change each character of the body in turn to another base64url character
    // that differs in its top bit, which always carries data (the low bits of
    // the last character may be padding).
    for (qsizetype i = prefixSize; i < text.size(); ++i) {
        QString mistyped = text;
        const qsizetype value = kAlphabet.indexOf(text.at(i));
        QVERIFY(value >= 0);
        mistyped[i] = kAlphabet.at(value ^ 0x20);
        expectRefused(mistyped, EnrollmentBundle::Kind::Forwarder, QStringLiteral("checksum"));
        if (QTest::currentTestFailed())
            QFAIL(qPrintable(QStringLiteral("character %1 changed: %2").arg(i).arg(mistyped)));
    }
}

void TestEnrollmentBundle::refusesCharacterOutsideAlphabet_data()
{
    QTest::addColumn<QChar>("bad");
    QTest::addColumn<int>("offset"); // into the body; negative counts from the end

    QTest::newRow("'!' first") << QChar(u'!') << 0;
    QTest::newRow("'+' (standard base64) in the middle") << QChar(u'+') << 20;
    QTest::newRow("'/' (standard base64) in the middle") << QChar(u'/') << 31;
    QTest::newRow("'=' padding at the end") << QChar(u'=') << -1;
    QTest::newRow("'.' second") << QChar(u'.') << 1;
    QTest::newRow("non-ASCII") << QChar(0x00e9) << 5;
    QTest::newRow("smart quote") << QChar(0x201d) << 12;
}

void TestEnrollmentBundle::refusesCharacterOutsideAlphabet()
{
    QFETCH(QChar, bad);
    QFETCH(int, offset);

    QString text = forwarderBundle().encode();
    const qsizetype prefixSize
        = EnrollmentBundle::prefixFor(EnrollmentBundle::Kind::Forwarder).size();
    const qsizetype index = offset >= 0 ? prefixSize + offset : text.size() + offset;
    text[index] = bad;

    // The message names the 1-based position in the pasted line.
    QString message;
    expectRefused(text, EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("position %1").arg(index + 1), &message);
    QVERIFY2(message.contains(QStringLiteral("'%1'").arg(bad)), qPrintable(message));
}

void TestEnrollmentBundle::refusesWrongPrefix()
{
    const QString text = forwarderBundle().encode();
    const QString body
        = text.mid(EnrollmentBundle::prefixFor(EnrollmentBundle::Kind::Forwarder).size());

    expectRefused(QStringLiteral("cloopfwd2.") + body, EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("starts with \"cloopfwd2.\", not \"cloopfwd1.\""));
    expectRefused(QStringLiteral("CLOOPFWD1.") + body, EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("must start with \"cloopfwd1.\""));
    expectRefused(body, EnrollmentBundle::Kind::Forwarder, QStringLiteral("not a cloop bundle"));
    expectRefused(QStringLiteral("cft_") + body, EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("not a cloop bundle"));
    // A prefix cut short is a wrong prefix, not a crash.
    expectRefused(text.left(5), EnrollmentBundle::Kind::Forwarder, QStringLiteral("cloopfwd1."));
}

void TestEnrollmentBundle::refusesOtherKind()
{
    // Given an executor bundle where a forwarder one is expected (and back),
    // then the message says which command it belongs to.
    expectRefused(executorBundle().encode(), EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("this is an executor bundle"));
    expectRefused(forwarderBundle().encode(), EnrollmentBundle::Kind::Executor,
        QStringLiteral("this is a forwarder bundle"));
}

void TestEnrollmentBundle::refusesEmpty()
{
    expectRefused(QString(), EnrollmentBundle::Kind::Forwarder, QStringLiteral("empty"));
    expectRefused(
        QStringLiteral(" \n\t "), EnrollmentBundle::Kind::Forwarder, QStringLiteral("empty"));
}

void TestEnrollmentBundle::refusesOverlong()
{
    EnrollmentBundle bundle = forwarderBundle();
    const QString text = bundle.encode() + QString(EnrollmentBundle::kMaxLength, QLatin1Char('A'));
    expectRefused(text, EnrollmentBundle::Kind::Forwarder, QStringLiteral("characters long"));
}

void TestEnrollmentBundle::refusesBadContentWithValidChecksum()
{
    // These pass the checksum (encode() does not validate), so it is the
    // content checks that must catch them.
    EnrollmentBundle wrongToken = forwarderBundle();
    wrongToken.token = secrets::generate(secrets::SecretKind::ForwarderCredential);
    expectRefused(wrongToken.encode(), EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("does not hold a forwarder enrollment token"));

    EnrollmentBundle noHub = forwarderBundle();
    noHub.hub = QUrl();
    expectRefused(
        noHub.encode(), EnrollmentBundle::Kind::Forwarder, QStringLiteral("no valid hub URL"));

    EnrollmentBundle badPin = forwarderBundle();
    badPin.pins = QStringLiteral("md5:abc");
    expectRefused(
        badPin.encode(), EnrollmentBundle::Kind::Forwarder, QStringLiteral("pin is invalid"));
}

void TestEnrollmentBundle::refusesEmptyPin_data()
{
    QTest::addColumn<QString>("pins");
    QTest::newRow("empty") << QString();
    QTest::newRow("only commas") << QStringLiteral(",,");
}

void TestEnrollmentBundle::refusesEmptyPin()
{
    QFETCH(QString, pins);
    // Given a bundle whose checksum is right but that pins no key,
    EnrollmentBundle unpinned = forwarderBundle();
    unpinned.pins = pins;
    const QString text = unpinned.encode();

    // when a daemon reads it as it does by default, then it is refused for
    // good, saying that the pin is missing: never read as "CA checks alone".
    const auto decoded = EnrollmentBundle::decode(text, EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(!decoded.ok(), "a bundle without a pin was accepted");
    QCOMPARE(decoded.error().code, QStringLiteral("bundle_unpinned"));
    QVERIFY(decoded.error().permanent);
    QVERIFY2(decoded.error().message.contains(QStringLiteral("no pin")),
        qPrintable(decoded.error().message));
    const auto asExecutor = EnrollmentBundle::decode(
        [&] {
            EnrollmentBundle executor = executorBundle();
            executor.pins = pins;
            return executor.encode();
        }(),
        EnrollmentBundle::Kind::Executor);
    QVERIFY(!asExecutor.ok());
    QCOMPARE(asExecutor.error().code, QStringLiteral("bundle_unpinned"));

    // Only an explicit choice takes it, and with no pin at all.
    const auto chosen = EnrollmentBundle::decode(
        text, EnrollmentBundle::Kind::Forwarder, net::PinRequirement::Optional);
    QVERIFY2(chosen.ok(), qPrintable(chosen.ok() ? QString() : chosen.error().message));
    QVERIFY(net::PinSet::parse(chosen->pins)->isEmpty());
}

void TestEnrollmentBundle::severalHubsRoundTrip()
{
    // Given a bundle of a cluster of three members, the longest URLs
    // included (plaintext to another host is the daemon's operator's call),
    const QString start = QStringLiteral("wss://hub-c.example.com:8443/");
    const QString longest = start + QString(net::kMaxHubUrlLength - start.size(), QLatin1Char('p'));
    QCOMPARE(longest.size(), net::kMaxHubUrlLength);
    EnrollmentBundle bundle = forwarderBundle();
    bundle.setHubs(urls({ QStringLiteral("wss://hub-b.example.com:8443"),
        QStringLiteral("ws://10.1.2.3:8080"), longest }));
    QCOMPARE(bundle.hub, QUrl(QStringLiteral("wss://hub-b.example.com:8443")));
    QCOMPARE(bundle.moreHubs.size(), 2);

    // when it is encoded, then "u" names the first URL, as it always did,
    // and "us" all of them in order,
    const QString text = bundle.encode();
    const QJsonObject body = bodyOf(text, EnrollmentBundle::Kind::Forwarder);
    QCOMPARE(
        body.value(QLatin1String("u")).toString(), QStringLiteral("wss://hub-b.example.com:8443"));
    QCOMPARE(body.value(QLatin1String("us")).toArray(),
        QJsonArray::fromStringList({ QStringLiteral("wss://hub-b.example.com:8443"),
            QStringLiteral("ws://10.1.2.3:8080"), longest }));

    // and decoding gives every URL back in the same order.
    const auto decoded = EnrollmentBundle::decode(text, EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->hubs(), bundle.hubs());
    QCOMPARE(decoded->hub, bundle.hub);
    QCOMPARE(decoded->token, bundle.token);
    QCOMPARE(decoded->pins, bundle.pins);

    // Sixteen URLs are allowed.
    QStringList sixteen;
    for (int i = 1; i <= net::kMaxHubUrls; ++i)
        sixteen.append(QStringLiteral("wss://hub-%1.example.com:8443").arg(i));
    bundle.setHubs(urls(sixteen));
    const auto many = EnrollmentBundle::decode(bundle.encode(), EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(many.ok(), qPrintable(many.ok() ? QString() : many.error().message));
    QCOMPARE(many->hubs(), urls(sixteen));
}

void TestEnrollmentBundle::bundleOfOneHubKeepsItsEarlierForm()
{
    // Given a bundle as hubs made it before clusters: "u" alone,
    const EnrollmentBundle bundle = forwarderBundle();
    const QString earlier = bundleOfBody(
        QJsonObject { { QStringLiteral("u"), bundle.hub.toString() },
            { QStringLiteral("t"), bundle.token }, { QStringLiteral("p"), bundle.pins } },
        EnrollmentBundle::Kind::Forwarder);

    // then it decodes to one hub URL,
    const auto decoded = EnrollmentBundle::decode(earlier, EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->hubs(), QList<QUrl> { bundle.hub });
    QVERIFY(decoded->moreHubs.isEmpty());

    // and a bundle of one hub is still made exactly so: no list, the same text.
    QCOMPARE(bundle.encode(), earlier);
    QVERIFY(
        !bodyOf(bundle.encode(), EnrollmentBundle::Kind::Forwarder).contains(QLatin1String("us")));
}

void TestEnrollmentBundle::refusesBadHubLists_data()
{
    QTest::addColumn<QJsonValue>("first"); // "u"; undefined: absent
    QTest::addColumn<QJsonValue>("all"); // "us"; undefined: absent
    QTest::addColumn<QString>("problem");

    const QString a = QStringLiteral("wss://hub-a.example.com:8443");
    const QString b = QStringLiteral("wss://hub-b.example.com:8443");
    QStringList seventeen;
    for (int i = 1; i <= net::kMaxHubUrls + 1; ++i)
        seventeen.append(QStringLiteral("wss://hub-%1.example.com").arg(i));

    QTest::newRow("seventeen URLs")
        << QJsonValue(seventeen.first()) << QJsonValue(QJsonArray::fromStringList(seventeen))
        << QStringLiteral("not a list of 1 to 16 hub URLs");
    QTest::newRow("a URL twice") << QJsonValue(a)
                                 << QJsonValue(QJsonArray::fromStringList({ a, b, a }))
                                 << QStringLiteral("hub-a.example.com:8443 is named twice");
    QTest::newRow("the same hub as https")
        << QJsonValue(a)
        << QJsonValue(
               QJsonArray::fromStringList({ a, QStringLiteral("https://hub-a.example.com:8443/") }))
        << QStringLiteral("named twice");
    QTest::newRow("another scheme in the list")
        << QJsonValue(a)
        << QJsonValue(QJsonArray::fromStringList({ a, QStringLiteral("ftp://hub-b.example.com") }))
        << QStringLiteral("scheme \"ftp\" is not wss:// or ws://");
    QTest::newRow("another scheme first")
        << QJsonValue(QStringLiteral("file:///etc/passwd")) << QJsonValue(QJsonValue::Undefined)
        << QStringLiteral("no valid hub URL");
    QTest::newRow("garbage in the list")
        << QJsonValue(a) << QJsonValue(QJsonArray::fromStringList({ a, QStringLiteral("b c") }))
        << QStringLiteral("\"b c\" is not a hub URL");
    QTest::newRow("a number in the list")
        << QJsonValue(a) << QJsonValue(QJsonArray({ a, 8443 })) << QStringLiteral("strings");
    QTest::newRow("an empty list")
        << QJsonValue(a) << QJsonValue(QJsonArray()) << QStringLiteral("not a list of 1 to 16");
    QTest::newRow("a list that is a string")
        << QJsonValue(a) << QJsonValue(a) << QStringLiteral("not a list of 1 to 16");
    QTest::newRow("a user name") << QJsonValue(a)
                                 << QJsonValue(QJsonArray::fromStringList(
                                        { a, QStringLiteral("wss://me:pw@hub-b.example") }))
                                 << QStringLiteral("user name");
    QTest::newRow("an overlong URL")
        << QJsonValue(a)
        << QJsonValue(QJsonArray::fromStringList(
               { a, QStringLiteral("wss://") + QString(net::kMaxHubUrlLength, QLatin1Char('h')) }))
        << QStringLiteral("longer than a hub URL may be");
    QTest::newRow("first URL not heading the list")
        << QJsonValue(b) << QJsonValue(QJsonArray::fromStringList({ a, b }))
        << QStringLiteral("does not head its list");
    QTest::newRow("a list without a first URL")
        << QJsonValue(QJsonValue::Undefined) << QJsonValue(QJsonArray::fromStringList({ a, b }))
        << QStringLiteral("no valid hub URL");
}

void TestEnrollmentBundle::refusesBadHubLists()
{
    QFETCH(QJsonValue, first);
    QFETCH(QJsonValue, all);
    QFETCH(QString, problem);

    // These pass the checksum, so the URL checks must catch them.
    const EnrollmentBundle bundle = forwarderBundle();
    QJsonObject body { { QStringLiteral("t"), bundle.token },
        { QStringLiteral("p"), bundle.pins } };
    if (!first.isUndefined())
        body.insert(QStringLiteral("u"), first);
    if (!all.isUndefined())
        body.insert(QStringLiteral("us"), all);
    expectRefused(bundleOfBody(body, EnrollmentBundle::Kind::Forwarder),
        EnrollmentBundle::Kind::Forwarder, problem);
}

void TestEnrollmentBundle::problemsHaveDistinctMessages()
{
    const QString text = forwarderBundle().encode();
    QString mistyped = text;
    mistyped[20] = kAlphabet.at(kAlphabet.indexOf(text.at(20)) ^ 0x20);
    QString outside = text;
    outside[20] = QLatin1Char('!');

    QString messages[5];
    expectRefused(
        mistyped, EnrollmentBundle::Kind::Forwarder, QStringLiteral("checksum"), &messages[0]);
    expectRefused(
        outside, EnrollmentBundle::Kind::Forwarder, QStringLiteral("position 21"), &messages[1]);
    expectRefused(QStringLiteral("cloopfwd1."), EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("truncated"), &messages[2]);
    expectRefused(
        QString(), EnrollmentBundle::Kind::Forwarder, QStringLiteral("empty"), &messages[3]);
    expectRefused(executorBundle().encode(), EnrollmentBundle::Kind::Forwarder,
        QStringLiteral("executor"), &messages[4]);
    for (int i = 0; i < 5; ++i) {
        for (int j = i + 1; j < 5; ++j)
            QCOMPARE_NE(messages[i], messages[j]);
    }
}

void TestEnrollmentBundle::tokenFileCommandKeepsTheBundleOffCommandLines()
{
    // Given the command the hub gives for a bundle, with `echo` standing in
    // for the daemon
    const EnrollmentBundle bundle = forwarderBundle();
    const QString command
        = bundle.tokenFileCommand(QStringLiteral("echo"), QStringLiteral("forwarder.bundle"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());

    // When a POSIX shell runs it
    QProcess shell;
    shell.setWorkingDirectory(dir.path());
    shell.start(QStringLiteral("/bin/sh"), { QStringLiteral("-c"), command });
    QVERIFY(shell.waitForFinished(10'000));
    QCOMPARE(shell.exitCode(), 0);

    // Then the daemon is started with the file, not the bundle
    QCOMPARE(QString::fromUtf8(shell.readAllStandardOutput()).trimmed(),
        QStringLiteral("--token-file forwarder.bundle"));
    // and the file holds the bundle, readable by its owner alone.
    QFile file(dir.filePath(QStringLiteral("forwarder.bundle")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.permissions()
            & (QFileDevice::ReadGroup | QFileDevice::ReadOther | QFileDevice::WriteGroup
                | QFileDevice::WriteOther),
        QFileDevice::Permissions());
    const QString saved = QString::fromUtf8(file.readAll()).trimmed();
    QCOMPARE(saved, bundle.encode());
    QVERIFY(EnrollmentBundle::decode(saved, EnrollmentBundle::Kind::Forwarder));
    // Only printf, a shell builtin, ever saw the bundle as an argument.
    QCOMPARE(command.count(bundle.encode()), 1);
    QVERIFY(
        command.contains(QStringLiteral("printf '%s\\n' '") + bundle.encode() + QLatin1Char('\'')));
}

QTEST_GUILESS_MAIN(TestEnrollmentBundle)
#include "tst_enrollmentbundle.moc"
