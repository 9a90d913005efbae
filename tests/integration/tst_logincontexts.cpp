// Integration: stored logins as contexts, as kubectl has them. Two people
// log in to one hub from one home: each login is a context, the newest is
// current, `cloop context use` switches whom admin commands act as and
// --context picks one for a single command; a wrong name is an argument
// error with a suggestion and changes nothing; logout forgets one login
// and leaves the others; a login file from before contexts reads as the
// current context "default".

#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

using namespace cloop::testing;

class TestLoginContexts final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void eachLoginIsAContextAndOneIsCurrent();
    void aLoginFromBeforeContextsIsTheDefaultContext();

private:
    CliResult cloop(const QStringList &arguments);
    // Who `cloop whoami` says the token belongs to, with these arguments.
    QString whoami(const QStringList &arguments = {});
    QJsonArray contexts();
    CliResult login(const QString &tokenFile, const QStringList &extra = {});

    std::unique_ptr<TestRig> m_rig;
    QString m_home;
    QString m_adminTokenFile;
    QString m_anaTokenFile;
    QString m_url;
};

void TestLoginContexts::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("user"), QStringLiteral("add"), QStringLiteral("ana") }), 0);
    const QString anaToken
        = hub.cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
                          QStringLiteral("ana"), QStringLiteral("--json") })
              .toObject()
              .value(QLatin1String("token"))
              .toString();
    QVERIFY(!anaToken.isEmpty());
    m_home = m_rig->newHome();
    m_url = QStringLiteral("wss://127.0.0.1:%1").arg(hub.port());
    m_adminTokenFile = m_rig->path(QStringLiteral("admin.token"));
    m_anaTokenFile = m_rig->path(QStringLiteral("ana.token"));
    for (const auto &[path, token] : { std::pair { m_adminTokenFile, hub.adminToken() },
             std::pair { m_anaTokenFile, anaToken } }) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write(token.toUtf8()) > 0);
    }
}

void TestLoginContexts::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

CliResult TestLoginContexts::cloop(const QStringList &arguments)
{
    return runProgram(binaryPath(QStringLiteral("cloop")), arguments, childEnvironment(m_home));
}

QString TestLoginContexts::whoami(const QStringList &arguments)
{
    const CliResult result
        = cloop(QStringList { QStringLiteral("whoami"), QStringLiteral("--json") } + arguments);
    if (result.exitCode != 0)
        return QStringLiteral("(failed: %1)").arg(result.describe());
    return QJsonDocument::fromJson(result.out).object().value(QLatin1String("user")).toString();
}

QJsonArray TestLoginContexts::contexts()
{
    const CliResult result
        = cloop({ QStringLiteral("context"), QStringLiteral("list"), QStringLiteral("--json") });
    return QJsonDocument::fromJson(result.out).object().value(QLatin1String("items")).toArray();
}

CliResult TestLoginContexts::login(const QString &tokenFile, const QStringList &extra)
{
    return cloop(QStringList { QStringLiteral("login"), QStringLiteral("--hub"), m_url,
                     QStringLiteral("--pin"), m_rig->hub().pin(), QStringLiteral("--token-file"),
                     tokenFile, QStringLiteral("--no-keyring") }
        + extra);
}

void TestLoginContexts::eachLoginIsAContextAndOneIsCurrent()
{
    const QString adminContext = QStringLiteral("admin@127.0.0.1:%1").arg(m_rig->hub().port());
    // The administrator logs in: a context named after them and the hub.
    const CliResult admin = login(m_adminTokenFile);
    CLOOP_COMPARE_EXIT(admin, 0);
    QVERIFY2(admin.stdoutText().contains(
                 QStringLiteral("context \"%1\" is now current").arg(adminContext)),
        qPrintable(admin.describe()));
    // A bad name is an argument error, before anything is sent or kept.
    CLOOP_COMPARE_EXIT(
        login(m_anaTokenFile, { QStringLiteral("--name"), QStringLiteral("lab ana") }), 2);
    QCOMPARE(contexts().size(), 1);
    // Ana logs in on the same machine, under a name of her choosing: hers is current.
    CLOOP_COMPARE_EXIT(
        login(m_anaTokenFile, { QStringLiteral("--name"), QStringLiteral("lab-ana") }), 0);
    QCOMPARE(whoami(), QStringLiteral("ana"));
    const QJsonArray listed = contexts();
    QCOMPARE(listed.size(), 2);
    for (const QJsonValue &value : listed) {
        const QJsonObject context = value.toObject();
        const bool isAna
            = context.value(QLatin1String("name")).toString() == QLatin1String("lab-ana");
        QCOMPARE(context.value(QLatin1String("current")).toBool(), isAna);
        QCOMPARE(context.value(QLatin1String("user")).toString(),
            isAna ? QStringLiteral("ana") : QStringLiteral("admin"));
        QCOMPARE(context.value(QLatin1String("hub")).toString(), m_url);
    }
    const CliResult table = cloop({ QStringLiteral("context"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(table, 0);
    QVERIFY2(table.stdoutText().contains(QRegularExpression(QStringLiteral("\\*\\s+lab-ana\\s"))),
        qPrintable(table.describe()));

    // Switching says who commands act as from now on; --context for one command.
    const CliResult switched
        = cloop({ QStringLiteral("context"), QStringLiteral("use"), adminContext });
    CLOOP_COMPARE_EXIT(switched, 0);
    QVERIFY2(
        switched.stdoutText().contains(QLatin1String("as admin")), qPrintable(switched.describe()));
    QCOMPARE(whoami(), QStringLiteral("admin"));
    QCOMPARE(
        whoami({ QStringLiteral("--context"), QStringLiteral("lab-ana") }), QStringLiteral("ana"));
    QCOMPARE(whoami(), QStringLiteral("admin"));

    // A context that is not there: exit 2, a suggestion, nothing changed.
    const CliResult typo
        = cloop({ QStringLiteral("context"), QStringLiteral("use"), QStringLiteral("lab-anna") });
    CLOOP_COMPARE_EXIT(typo, 2);
    QVERIFY2(typo.stderrText().contains(QLatin1String("did you mean \"lab-ana\"")),
        qPrintable(typo.describe()));
    QCOMPARE(whoami(), QStringLiteral("admin"));
    CLOOP_COMPARE_EXIT(
        cloop({ QStringLiteral("whoami"), QStringLiteral("--context"), QStringLiteral("nobody") }),
        2);
    CLOOP_COMPARE_EXIT(cloop({ QStringLiteral("whoami"), QStringLiteral("--context"),
                           QStringLiteral("lab-ana"), QStringLiteral("--hub"), m_url }),
        2);

    // Logging out of one leaves the other, and no login is current then.
    const CliResult out
        = cloop({ QStringLiteral("logout"), QStringLiteral("--name"), adminContext });
    CLOOP_COMPARE_EXIT(out, 0);
    QVERIFY2(out.stdoutText().contains(QLatin1String("lab-ana")), qPrintable(out.describe()));
    QCOMPARE(contexts().size(), 1);
    QVERIFY(!contexts().first().toObject().value(QLatin1String("current")).toBool());
    CLOOP_COMPARE_EXIT(
        cloop({ QStringLiteral("context"), QStringLiteral("use"), QStringLiteral("lab-ana") }), 0);
    CLOOP_COMPARE_EXIT(cloop({ QStringLiteral("logout") }), 0);
    QCOMPARE(contexts().size(), 0);
    QVERIFY(!QFile::exists(m_home + QLatin1String("/.cloop/login.json")));
    const CliResult again = cloop({ QStringLiteral("logout") });
    CLOOP_COMPARE_EXIT(again, 0);
    QVERIFY(again.stdoutText().contains(QLatin1String("Not logged in")));
}

void TestLoginContexts::aLoginFromBeforeContextsIsTheDefaultContext()
{
    // The file `cloop login` wrote before there were contexts.
    QVERIFY(QDir().mkpath(m_home + QLatin1String("/.cloop")));
    QFile old(m_home + QLatin1String("/.cloop/login.json"));
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write(QJsonDocument(QJsonObject { { QStringLiteral("hub"), m_url },
                                { QStringLiteral("pin"), m_rig->hub().pin() },
                                { QStringLiteral("token_in"), QStringLiteral("file") },
                                { QStringLiteral("token"), m_rig->hub().adminToken() } })
                  .toJson());
    old.close();
    QVERIFY(old.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    QCOMPARE(whoami(), QStringLiteral("admin"));
    QCOMPARE(contexts().size(), 1);
    QCOMPARE(contexts().first().toObject().value(QLatin1String("name")).toString(),
        QStringLiteral("default"));
    // A new login adds to it rather than replacing it.
    CLOOP_COMPARE_EXIT(login(m_anaTokenFile), 0);
    QCOMPARE(whoami(), QStringLiteral("ana"));
    QCOMPARE(contexts().size(), 2);
    CLOOP_COMPARE_EXIT(
        cloop({ QStringLiteral("context"), QStringLiteral("use"), QStringLiteral("default") }), 0);
    QCOMPARE(whoami(), QStringLiteral("admin"));
    // The file stays its owner's alone.
    QCOMPARE(QFile(m_home + QLatin1String("/.cloop/login.json")).permissions()
            & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
        QFileDevice::Permissions());
}

QTEST_GUILESS_MAIN(TestLoginContexts)
#include "tst_logincontexts.moc"
