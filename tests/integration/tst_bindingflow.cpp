// Integration: people, bindings and approvals through the real `cloop`
// command line against a real hub. A hub administrator sets up a project
// with an administrator (alice) and a maintainer (maria); maria logs in from
// her own home, asks for the lab segment, alice approves a shorter lease,
// and the binding shows, ends and is audited; revocations take effect at once.

#include "support/testrig.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cloop::testing;

namespace {
const QString kProject = QStringLiteral("/srv/projects/bench");

// A person at their own machine: their own HOME, no hub data folder, the
// CLI finds the hub through `cloop login`.
class Person
{
public:
    Person(TestRig &rig, QString name)
        : m_name(std::move(name))
        , m_home(rig.newHome())
    { }

    CliResult cli(const QStringList &arguments) const
    {
        return runProgram(binaryPath(QStringLiteral("cloop")), arguments, childEnvironment(m_home));
    }
    QJsonValue cliJson(const QStringList &arguments) const
    {
        const CliResult result = cli(arguments + QStringList { QStringLiteral("--json") });
        if (result.exitCode != 0)
            return QJsonValue(QJsonValue::Undefined);
        const QJsonDocument document = QJsonDocument::fromJson(result.out);
        return document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object());
    }
    // A listing's items; an answer without them reads as no items at all,
    // which the callers' counts tell apart from the ones they expect.
    QJsonArray cliItems(const QStringList &arguments) const
    {
        return cliJson(arguments).toObject().value(QLatin1String("items")).toArray();
    }
    const QString &home() const { return m_home; }
    const QString &name() const { return m_name; }

private:
    QString m_name;
    QString m_home;
};
} // namespace

class TestBindingFlow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void requestApproveUnbindThroughTheCli();

private:
    bool addPerson(const QString &name, const QString &role, std::unique_ptr<Person> &out);

    std::unique_ptr<TestRig> m_rig;
};

void TestBindingFlow::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestBindingFlow::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

bool TestBindingFlow::addPerson(
    const QString &name, const QString &role, std::unique_ptr<Person> &out)
{
    HubProcess &hub = m_rig->hub();
    if (hub.cli({ QStringLiteral("user"), QStringLiteral("add"), name }).exitCode != 0)
        return false;
    if (hub.cli({ QStringLiteral("project"), QStringLiteral("grant"), kProject,
                    QStringLiteral("--user"), name, QStringLiteral("--role"), role })
            .exitCode
        != 0)
        return false;
    const QJsonObject token
        = hub.cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
                          name, QStringLiteral("--label"), QStringLiteral("test"),
                          QStringLiteral("--json") })
              .toObject();
    auto person = std::make_unique<Person>(*m_rig, name);
    const QString tokenFile = m_rig->path(name + QLatin1String(".token"));
    QFile file(tokenFile);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(token.value(QLatin1String("token")).toString().toUtf8()) <= 0)
        return false;
    file.close();
    const CliResult login = person->cli({ QStringLiteral("login"), QStringLiteral("--hub"),
        QStringLiteral("wss://127.0.0.1:%1").arg(hub.port()), QStringLiteral("--pin"), hub.pin(),
        QStringLiteral("--token-file"), tokenFile, QStringLiteral("--no-keyring") });
    if (login.exitCode != 0) {
        qWarning().noquote() << login.describe();
        return false;
    }
    out = std::move(person);
    return true;
}

void TestBindingFlow::requestApproveUnbindThroughTheCli()
{
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    std::unique_ptr<Person> alice, maria;
    QVERIFY(addPerson(QStringLiteral("alice"), QStringLiteral("administrator"), alice));
    QVERIFY(addPerson(QStringLiteral("maria"), QStringLiteral("maintainer"), maria));
    const Enrollment lab = hub.enroll(
        QStringLiteral("lab"), { QStringLiteral("--interface"), QStringLiteral("eth7") });
    QVERIFY2(lab.ok, qPrintable(lab.error));
    const QString labId = QString::number(lab.id);

    // Logging in kept the token in a file only its owner can read.
    QFile login(maria->home() + QLatin1String("/.cloop/login.json"));
    QVERIFY(login.exists());
    QCOMPARE(login.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
        QFileDevice::Permissions());
    QCOMPARE(maria->cliJson({ QStringLiteral("whoami") })
                 .toObject()
                 .value(QLatin1String("user"))
                 .toString(),
        QStringLiteral("maria"));

    // A maintainer cannot bind, but may ask.
    const CliResult bind = maria->cli({ QStringLiteral("forward"), QStringLiteral("bind"), labId,
        QStringLiteral("--project"), kProject });
    CLOOP_COMPARE_EXIT(bind, 1);
    QVERIFY2(
        bind.stderrText().contains(QLatin1String("executor.manage")), qPrintable(bind.describe()));
    const QJsonObject request
        = maria
              ->cliJson({ QStringLiteral("forward"), QStringLiteral("request"), labId,
                  QStringLiteral("--project"), kProject, QStringLiteral("--ttl"),
                  QStringLiteral("8h"), QStringLiteral("--target"), QStringLiteral("eth1"),
                  QStringLiteral("--address"), QStringLiteral("10.77.0.2/24"),
                  QStringLiteral("--reason"), QStringLiteral("tonight's run") })
              .toObject();
    const qint64 requestId = request.value(QLatin1String("id")).toInteger();
    QVERIFY2(requestId > 0, qPrintable(QString::fromUtf8(QJsonDocument(request).toJson())));
    const QString requestArg = QString::number(requestId);

    // She cannot decide it herself; it waits in alice's inbox, not hers.
    CLOOP_COMPARE_EXIT(
        maria->cli({ QStringLiteral("approvals"), QStringLiteral("approve"), requestArg }), 1);
    QCOMPARE(maria->cliItems({ QStringLiteral("approvals"), QStringLiteral("list") }).size(), 0);
    const QJsonArray inbox
        = alice->cliItems({ QStringLiteral("approvals"), QStringLiteral("list") });
    QCOMPARE(inbox.size(), 1);
    QCOMPARE(inbox.at(0).toObject().value(QLatin1String("requested_by")).toString(),
        QStringLiteral("maria"));

    // Alice may shorten the lease, not lengthen it.
    CLOOP_COMPARE_EXIT(alice->cli({ QStringLiteral("approvals"), QStringLiteral("approve"),
                           requestArg, QStringLiteral("--ttl"), QStringLiteral("9h") }),
        1);
    const QDateTime approvedAround = QDateTime::currentDateTimeUtc();
    const QJsonObject approved
        = alice
              ->cliJson({ QStringLiteral("approvals"), QStringLiteral("approve"), requestArg,
                  QStringLiteral("--ttl"), QStringLiteral("4h") })
              .toObject();
    const QJsonObject binding = approved.value(QLatin1String("binding")).toObject();
    QCOMPARE(binding.value(QLatin1String("target")).toString(), QStringLiteral("eth1"));
    QCOMPARE(binding.value(QLatin1String("address")).toString(), QStringLiteral("10.77.0.2/24"));
    const QDateTime answered = QDateTime::currentDateTimeUtc();
    // Four hours from the approval, which happened between the two readings
    // of the clock (however slow the machine).
    const QDateTime expires = QDateTime::fromString(
        binding.value(QLatin1String("expires_at")).toString(), Qt::ISODateWithMs);
    QVERIFY2(expires >= approvedAround.addSecs(4 * 3600).addMSecs(-1)
            && expires <= answered.addSecs(4 * 3600),
        qPrintable(QStringLiteral("%1 is not 4 h after the approval (%2 .. %3)")
                       .arg(expires.toString(Qt::ISODateWithMs),
                           approvedAround.toString(Qt::ISODateWithMs),
                           answered.toString(Qt::ISODateWithMs))));

    // Both see the binding of their project.
    const QJsonArray bindings = maria->cliItems({ QStringLiteral("forward"),
        QStringLiteral("bindings"), QStringLiteral("--project"), kProject });
    QCOMPARE(bindings.size(), 1);
    const QString bindingArg
        = QString::number(bindings.at(0).toObject().value(QLatin1String("id")).toInteger());

    // Unbinding needs a reason, then the binding is gone and remembered.
    CLOOP_COMPARE_EXIT(
        alice->cli({ QStringLiteral("forward"), QStringLiteral("unbind"), bindingArg }), 2);
    CLOOP_COMPARE_EXIT(alice->cli({ QStringLiteral("forward"), QStringLiteral("unbind"), bindingArg,
                           QStringLiteral("--reason"), QStringLiteral("bench returned") }),
        0);
    QCOMPARE(alice->cliItems({ QStringLiteral("forward"), QStringLiteral("bindings") }).size(), 0);
    const QJsonArray history = alice->cliItems(
        { QStringLiteral("forward"), QStringLiteral("bindings"), QStringLiteral("--all") });
    QCOMPARE(history.size(), 1);
    QCOMPARE(history.at(0).toObject().value(QLatin1String("state")).toString(),
        QStringLiteral("unbound"));
    QCOMPARE(history.at(0).toObject().value(QLatin1String("end_reason")).toString(),
        QStringLiteral("bench returned"));

    // Revoking the forwarder ends a new binding at once.
    CLOOP_COMPARE_EXIT(
        alice->cli({ QStringLiteral("forward"), QStringLiteral("bind"), labId,
            QStringLiteral("--project"), kProject, QStringLiteral("--ttl"), QStringLiteral("1h") }),
        0);
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("forward"), QStringLiteral("revoke"), labId }), 0);
    const QJsonArray afterRevoke = alice->cliItems(
        { QStringLiteral("forward"), QStringLiteral("bindings"), QStringLiteral("--all") });
    QCOMPARE(afterRevoke.size(), 2);
    QCOMPARE(afterRevoke.at(1).toObject().value(QLatin1String("state")).toString(),
        QStringLiteral("forwarder_revoked"));

    // Every step is in the audit log, which only the hub administrator reads.
    CLOOP_COMPARE_EXIT(alice->cli({ QStringLiteral("audit") }), 1);
    const QJsonArray audit = hub.cliItems({ QStringLiteral("audit"), QStringLiteral("--json") });
    QStringList actions;
    for (const QJsonValue &entry : audit)
        actions.append(entry.toObject().value(QLatin1String("action")).toString());
    for (const char *expected : { "forwarder.request", "forwarder.approve", "forwarder.bind",
             "forwarder.unbind", "forwarder.revoke" })
        QVERIFY2(actions.contains(QLatin1String(expected)), expected);
    QCOMPARE(actions.count(QStringLiteral("forwarder.approve")), 1);

    // A revoked API token stops working at once.
    const QJsonArray tokens = hub.cliItems({ QStringLiteral("token"), QStringLiteral("list"),
        QStringLiteral("--user"), QStringLiteral("maria"), QStringLiteral("--json") });
    QCOMPARE(tokens.size(), 1);
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("token"), QStringLiteral("revoke"),
            QString::number(tokens.at(0).toObject().value(QLatin1String("id")).toInteger()) }),
        0);
    const CliResult refused = maria->cli({ QStringLiteral("whoami") });
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(
        refused.stderrText().contains(QLatin1String("revoked")), qPrintable(refused.describe()));
}

QTEST_GUILESS_MAIN(TestBindingFlow)
#include "tst_bindingflow.moc"
