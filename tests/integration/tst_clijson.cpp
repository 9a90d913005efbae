// Integration: what `cloop … --json` prints, against the schema checked
// into the repository (docs/cli-json.schema.json), read by python3-jsonschema:
// listings as {"items": [...]}, single records as themselves, and failures
// as {"error": {...}} on stderr with nothing on stdout.

#include "support/testrig.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

using namespace cloop::testing;

namespace {

const QString kSchema = QStringLiteral(CLOOP_SOURCE_DIR "/docs/cli-json.schema.json");
const QString kValidator = QStringLiteral(CLOOP_SOURCE_DIR "/tests/integration/validate-json.py");

// Empty when `json` conforms to the schema's `definition`, else why not.
QString violations(const QByteArray &json, const QString &definition)
{
    QProcess validator;
    validator.start(QStringLiteral("python3"), { kValidator, kSchema, definition });
    if (!validator.waitForStarted())
        return QStringLiteral("python3 did not start");
    validator.write(json);
    validator.closeWriteChannel();
    if (!validator.waitForFinished(kLongWaitMs))
        return QStringLiteral("the validator did not finish");
    if (validator.exitStatus() == QProcess::NormalExit && validator.exitCode() == 0)
        return {};
    return QStringLiteral("%1 (exit %2): %3\n%4")
        .arg(definition)
        .arg(validator.exitCode())
        .arg(QString::fromUtf8(validator.readAllStandardError()), QString::fromUtf8(json));
}

} // namespace

class TestCliJson final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void theSchemaRefusesWhatItShould();
    void everyListingIsAnEnvelopeOfItems_data();
    void everyListingIsAnEnvelopeOfItems();
    void recordsFollowTheSchema();
    void failuresAreJsonOnStderr_data();
    void failuresAreJsonOnStderr();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestCliJson::initTestCase()
{
    // The validator needs python3-jsonschema (scripts/install-deps).
    QProcess probe;
    probe.start(
        QStringLiteral("python3"), { QStringLiteral("-c"), QStringLiteral("import jsonschema") });
    QVERIFY2(probe.waitForFinished(kLongWaitMs) && probe.exitCode() == 0,
        "python3-jsonschema is missing: run scripts/install-deps");
}

void TestCliJson::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"),
                           QStringLiteral("/srv/projects/hsm") }),
        0);
    const Enrollment key = hub.enroll(
        QStringLiteral("hsm-1"), { QStringLiteral("--usb"), QStringLiteral("1050:0407") });
    QVERIFY2(key.ok, qPrintable(key.error));
    const Enrollment lab = hub.enroll(
        QStringLiteral("lab-3"), { QStringLiteral("--interface"), QStringLiteral("eth1") });
    QVERIFY2(lab.ok, qPrintable(lab.error));
}

void TestCliJson::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestCliJson::theSchemaRefusesWhatItShould()
{
    // The validator really validates: a bare array, an item that is not a
    // record, a forwarder without its state, an error without its code.
    QVERIFY(!violations("[]", QStringLiteral("listing")).isEmpty());
    QVERIFY(!violations(R"({"items":[1]})", QStringLiteral("listing")).isEmpty());
    QVERIFY(!violations(R"({"items":[],"extra":1})", QStringLiteral("listing")).isEmpty());
    QVERIFY(!violations(
        R"({"items":[{"id":1,"name":"a","connected":false}]})", QStringLiteral("forwarderListing"))
                 .isEmpty());
    QVERIFY(!violations(
        R"({"error":{"message":"m","command":"cloop x","exit_code":1}})", QStringLiteral("error"))
                 .isEmpty());
    // A state is an enum, not a phrase.
    QVERIFY(!violations(
        R"({"items":[{"id":1,"name":"a","state":"awaiting enrollment","connected":false,)"
        R"("device":{"kind":"usb"},"device_description":"d","created_at":"2026-12-01T10:00:00Z"}]})",
        QStringLiteral("forwarderListing"))
                 .isEmpty());
    QCOMPARE(violations(R"({"items":[]})", QStringLiteral("listing")), QString());
}

void TestCliJson::everyListingIsAnEnvelopeOfItems_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("definition");
    QTest::addColumn<int>("atLeast");

    QTest::newRow("forward list") << QStringList { QStringLiteral("forward"),
        QStringLiteral("list") } << QStringLiteral("forwarderListing")
                                  << 2;
    QTest::newRow("forward bindings")
        << QStringList { QStringLiteral("forward"), QStringLiteral("bindings") }
        << QStringLiteral("listing") << 0;
    QTest::newRow("executor list")
        << QStringList { QStringLiteral("executor"), QStringLiteral("list") }
        << QStringLiteral("listing") << 0;
    QTest::newRow("executor virtual list") << QStringList { QStringLiteral("executor"),
        QStringLiteral("virtual"), QStringLiteral("list") }
                                           << QStringLiteral("listing") << 0;
    QTest::newRow("run list") << QStringList { QStringLiteral("run"), QStringLiteral("list") }
                              << QStringLiteral("listing") << 0;
    QTest::newRow("approvals list")
        << QStringList { QStringLiteral("approvals"), QStringLiteral("list") }
        << QStringLiteral("listing") << 0;
    QTest::newRow("project list") << QStringList { QStringLiteral("project"),
        QStringLiteral("list") } << QStringLiteral("listing")
                                  << 1;
    QTest::newRow("user list") << QStringList { QStringLiteral("user"), QStringLiteral("list") }
                               << QStringLiteral("listing") << 1;
    QTest::newRow("token list") << QStringList { QStringLiteral("token"), QStringLiteral("list") }
                                << QStringLiteral("listing") << 1;
    QTest::newRow("audit") << QStringList { QStringLiteral("audit") }
                           << QStringLiteral("auditListing") << 3;
}

void TestCliJson::everyListingIsAnEnvelopeOfItems()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, definition);
    QFETCH(int, atLeast);
    const CliResult listed = m_rig->hub().cli(arguments + QStringList { QStringLiteral("--json") });
    CLOOP_COMPARE_EXIT(listed, 0);
    const QString why = violations(listed.out, definition);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const QJsonArray items
        = QJsonDocument::fromJson(listed.out).object().value(QLatin1String("items")).toArray();
    QVERIFY2(items.size() >= atLeast, qPrintable(listed.describe()));
}

void TestCliJson::recordsFollowTheSchema()
{
    const CliResult whoami
        = m_rig->hub().cli({ QStringLiteral("whoami"), QStringLiteral("--json") });
    CLOOP_COMPARE_EXIT(whoami, 0);
    const QString why = violations(whoami.out, QStringLiteral("whoami"));
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // The hub it asked and where the token came from, as the text says.
    const QJsonObject me = QJsonDocument::fromJson(whoami.out).object();
    QVERIFY(me.value(QLatin1String("hub"))
                .toString()
                .endsWith(QStringLiteral(":%1").arg(m_rig->hub().port())));
}

void TestCliJson::failuresAreJsonOnStderr_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("code");

    QTest::newRow("an argument") << QStringList { QStringLiteral("forward"), QStringLiteral("test"),
        QStringLiteral("three") } << 2
                                 << QStringLiteral("usage");
    QTest::newRow("the hub refuses")
        << QStringList { QStringLiteral("forward"), QStringLiteral("test"), QStringLiteral("999") }
        << 1 << QString();
    QTest::newRow("a name") << QStringList { QStringLiteral("forward"), QStringLiteral("enroll"),
        QStringLiteral("--name"), QStringLiteral("Lab 3"), QStringLiteral("--usb"),
        QStringLiteral("1050:0407") }
                            << 2 << QStringLiteral("usage");
    // lab-3 (id 2) never redeemed: a new bundle is fine; 1 and 2 exist, 9 does not.
    QTest::newRow("reenroll without an id") << QStringList { QStringLiteral("forward"),
        QStringLiteral("reenroll") } << 2 << QStringLiteral("usage");
    QTest::newRow("reenroll a forwarder that is not there") << QStringList {
        QStringLiteral("forward"), QStringLiteral("reenroll"), QStringLiteral("9")
    } << 1 << QStringLiteral("not_found");
}

void TestCliJson::failuresAreJsonOnStderr()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, code);
    const CliResult failed = m_rig->hub().cli(arguments + QStringList { QStringLiteral("--json") });
    CLOOP_COMPARE_EXIT(failed, exitCode);
    QVERIFY2(failed.out.isEmpty(), qPrintable(failed.describe()));
    const QString why = violations(failed.err, QStringLiteral("error"));
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const QJsonObject error
        = QJsonDocument::fromJson(failed.err).object().value(QLatin1String("error")).toObject();
    QCOMPARE(error.value(QLatin1String("exit_code")).toInt(), exitCode);
    if (!code.isEmpty())
        QCOMPARE(error.value(QLatin1String("code")).toString(), code);
}

QTEST_GUILESS_MAIN(TestCliJson)
#include "tst_clijson.moc"
