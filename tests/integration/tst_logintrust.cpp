// Integration: `cloop login` to a hub whose key nobody pinned yet, as ssh
// does it: the key the hub presents is shown on the terminal, grouped for
// comparison with `cloop hub pin`, and trusted only on a yes; without a
// terminal to ask on, nothing is trusted and the pin to pass is named.
// The terminal is a pseudo-terminal (tests/integration/on-a-terminal.py).

#include "common/net/spkipin.h"
#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace cloop::testing;

namespace {
const QString kQuestion = QStringLiteral("Trust this key and log in? [y/N]");
const QString kOnATerminal = QStringLiteral(CLOOP_SOURCE_DIR "/tests/integration/on-a-terminal.py");
} // namespace

class TestLoginTrust final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aYesTrustsThePresentedKey();
    void aNoSendsNothingAndKeepsNothing();
    void withoutATerminalThePinToPassIsNamed();

private:
    // `cloop login` to the hub without --pin, on a terminal answering
    // `answer`, or with none when `answer` is empty.
    CliResult login(const QString &answer);

    std::unique_ptr<TestRig> m_rig;
    QString m_home;
    QString m_tokenFile;
};

void TestLoginTrust::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(
        hub.cli({ QStringLiteral("user"), QStringLiteral("add"), QStringLiteral("ana") }), 0);
    const QString token
        = hub.cliJson({ QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"),
                          QStringLiteral("ana"), QStringLiteral("--json") })
              .toObject()
              .value(QLatin1String("token"))
              .toString();
    QVERIFY(!token.isEmpty());
    m_home = m_rig->newHome();
    m_tokenFile = m_rig->path(QStringLiteral("ana.token"));
    QFile file(m_tokenFile);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(token.toUtf8()) > 0);
}

void TestLoginTrust::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

CliResult TestLoginTrust::login(const QString &answer)
{
    const QStringList loginArguments { binaryPath(QStringLiteral("cloop")), QStringLiteral("login"),
        QStringLiteral("--hub"), QStringLiteral("wss://127.0.0.1:%1").arg(m_rig->hub().port()),
        QStringLiteral("--token-file"), m_tokenFile, QStringLiteral("--no-keyring") };
    if (answer.isEmpty())
        // A session of its own has no controlling terminal.
        return runProgram(QStringLiteral("setsid"),
            QStringList { QStringLiteral("-w") } + loginArguments, childEnvironment(m_home));
    return runProgram(QStringLiteral("python3"),
        QStringList { kOnATerminal, kQuestion, answer, QStringLiteral("--") } + loginArguments,
        childEnvironment(m_home));
}

void TestLoginTrust::aYesTrustsThePresentedKey()
{
    const CliResult yes = login(QStringLiteral("y"));
    CLOOP_COMPARE_EXIT(yes, 0);
    const QString pin = m_rig->hub().pin();
    // Shown grouped, the same key `cloop hub pin` prints.
    QVERIFY2(
        yes.stdoutText().contains(cloop::net::PinSet::grouped(pin)), qPrintable(yes.describe()));
    QVERIFY2(yes.stdoutText().contains(QLatin1String("Logged in to")), qPrintable(yes.describe()));
    QFile stored(m_home + QLatin1String("/.cloop/login.json"));
    QVERIFY(stored.open(QIODevice::ReadOnly));
    QVERIFY2(stored.readAll().contains(pin.toUtf8()), "the trusted pin is kept with the login");
    // The login works on its own afterwards.
    const CliResult whoami = runProgram(binaryPath(QStringLiteral("cloop")),
        { QStringLiteral("whoami") }, childEnvironment(m_home));
    CLOOP_COMPARE_EXIT(whoami, 0);
    QVERIFY2(whoami.stdoutText().contains(QLatin1String("ana")), qPrintable(whoami.describe()));
}

void TestLoginTrust::aNoSendsNothingAndKeepsNothing()
{
    const CliResult no = login(QStringLiteral("n"));
    CLOOP_COMPARE_EXIT(no, 1);
    QVERIFY2(no.stdoutText().contains(QLatin1String("was not trusted: nothing was sent")),
        qPrintable(no.describe()));
    QVERIFY(!QFile::exists(m_home + QLatin1String("/.cloop/login.json")));
    QVERIFY2(!no.stdoutText().contains(QLatin1String("Logged in")), qPrintable(no.describe()));
}

void TestLoginTrust::withoutATerminalThePinToPassIsNamed()
{
    const CliResult batch = login(QString());
    CLOOP_COMPARE_EXIT(batch, 2);
    QVERIFY2(batch.stderrText().contains(QStringLiteral("--pin ") + m_rig->hub().pin()),
        qPrintable(batch.describe()));
    QVERIFY(!QFile::exists(m_home + QLatin1String("/.cloop/login.json")));
}

QTEST_GUILESS_MAIN(TestLoginTrust)
#include "tst_logintrust.moc"
