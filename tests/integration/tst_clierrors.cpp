// Integration: wrong input to the real programs ends with the documented
// exit code and a message that says what is wrong (cloop-forward: 2 for
// usage and configuration; cloop: 2 for usage, 1 for a refused request).

#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSslCertificate>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QTest>

using namespace cloop::testing;

class TestCliErrors final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void badInputClearErrors();
    void theTokenInTheEnvironmentIsWhoActs();
    void aMistypedWordGetsWhatWasMeantAndWhereTheUsageIs_data();
    void aMistypedWordGetsWhatWasMeantAndWhereTheUsageIs();
    void everyFamilyListsItsCommandsWithAnExample();
    void argumentAndConfigurationErrorsExitWithTwo_data();
    void argumentAndConfigurationErrorsExitWithTwo();
    void aHubWithoutItsCertificateIsAConfigurationError();
    void aMalformedListingIsRefusedSayingWhere_data();
    void aMalformedListingIsRefusedSayingWhere();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestCliErrors::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestCliErrors::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestCliErrors::theTokenInTheEnvironmentIsWhoActs()
{
    HubProcess &hub = m_rig->hub();
    const QString token = hub.tokenOfNewUser(QStringLiteral("maria"));
    QVERIFY2(!token.isEmpty(), qPrintable(hub.transcript().right(2000)));
    // The hub on this machine is found through its cli.json, which holds the
    // administrator's token; $CLOOP_TOKEN still says who acts.
    const auto whoamiWith = [&](const QString &value) {
        QProcessEnvironment environment = childEnvironment(hub.homeDir());
        environment.insert(QStringLiteral("CLOOP_HUB_DATA"), hub.dataDir());
        environment.insert(QStringLiteral("CLOOP_TOKEN"), value);
        return runProgram(
            binaryPath(QStringLiteral("cloop")), { QStringLiteral("whoami") }, environment);
    };
    const CliResult asMaria = whoamiWith(token);
    CLOOP_COMPARE_EXIT(asMaria, 0);
    QVERIFY2(asMaria.stdoutText().contains(QLatin1String("maria")), qPrintable(asMaria.describe()));
    QVERIFY2(
        !asMaria.stdoutText().contains(QLatin1String("admin")), qPrintable(asMaria.describe()));
    // A token the hub does not know is refused; it never falls back to the
    // administrator's.
    const CliResult bogus = whoamiWith(QStringLiteral("cat_notatokenthehubknows"));
    CLOOP_COMPARE_EXIT(bogus, 1);
    QVERIFY2(!bogus.stdoutText().contains(QLatin1String("admin")), qPrintable(bogus.describe()));
}

void TestCliErrors::badInputClearErrors()
{
    HubProcess &hub = m_rig->hub();
    const QString home = m_rig->newHome();

    // A bundle that is not one
    const CliResult garbage = m_rig->runForwarder(
        { QStringLiteral("--bundle"), QStringLiteral("cloopfwd1.garbage") }, home);
    CLOOP_COMPARE_EXIT(garbage, 2);
    QVERIFY2(
        garbage.stderrText().contains(QLatin1String("bundle")), qPrintable(garbage.describe()));

    // A real bundle pasted without its end
    const Enrollment enrollment = hub.enroll(QStringLiteral("cut-short"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const CliResult truncated
        = m_rig->runForwarder({ QStringLiteral("--bundle"), enrollment.bundle.chopped(5) }, home);
    CLOOP_COMPARE_EXIT(truncated, 2);
    QVERIFY2(truncated.stderrText().contains(QLatin1String("truncated"))
            || truncated.stderrText().contains(QLatin1String("checksum")),
        qPrintable(truncated.describe()));

    // A credential file that could never be written is found before the
    // one-time token is spent: the same bundle still enrolls afterwards.
    const Enrollment unsaved = hub.enroll(QStringLiteral("unsaved"));
    QVERIFY2(unsaved.ok, qPrintable(unsaved.error));
    const CliResult unwritable = m_rig->runForwarder(
        { QStringLiteral("--bundle"), unsaved.bundle, QStringLiteral("--credential-file"),
            QStringLiteral("/proc/cloop-no-such-folder/forwarder.json") },
        home);
    CLOOP_COMPARE_EXIT(unwritable, 2);
    QVERIFY2(unwritable.stderrText().contains(QLatin1String("cannot save the credential")),
        qPrintable(unwritable.describe()));
    QCOMPARE(hub.forwarder(unsaved.id).value(QLatin1String("state")).toString(),
        QStringLiteral("awaiting_enrollment"));
    ConnectedForwarder late;
    late.enrollment = unsaved;
    late.process
        = &m_rig->addForwarder({ QStringLiteral("--bundle"), unsaved.bundle }, m_rig->newHome());
    QVERIFY2(
        m_rig->startAndAwaitConnection(*late.process, unsaved.id), qPrintable(m_rig->lastError()));

    // Limits of the hub's port that make no sense are refused before it starts.
    for (const auto &[option, value] :
        { std::pair { QStringLiteral("--connection-rate"), QStringLiteral("0") },
            std::pair { QStringLiteral("--max-unauthenticated"), QStringLiteral("lots") },
            std::pair { QStringLiteral("--max-unauthenticated-per-source"), QStringLiteral("-3") },
            std::pair { QStringLiteral("--preauth-timeout"), QStringLiteral("0s") } }) {
        const CliResult limit = hub.cli({ QStringLiteral("hub"), QStringLiteral("serve"),
            QStringLiteral("--data"), m_rig->path(QStringLiteral("unused-hub")),
            QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), option, value });
        CLOOP_COMPARE_EXIT(limit, 2);
        QVERIFY2(limit.stderrText().contains(option), qPrintable(limit.describe()));
    }

    // No bundle and nothing enrolled in this HOME
    const CliResult notEnrolled = m_rig->runForwarder({}, home);
    CLOOP_COMPARE_EXIT(notEnrolled, 2);
    QVERIFY2(notEnrolled.stderrText().contains(QLatin1String("not enrolled")),
        qPrintable(notEnrolled.describe()));

    // A damaged credential file is named
    const QString broken = m_rig->path(QStringLiteral("broken.json"));
    {
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.write("{broken") > 0);
    }
    const CliResult damaged
        = m_rig->runForwarder({ QStringLiteral("--credential-file"), broken }, home);
    CLOOP_COMPARE_EXIT(damaged, 2);
    QVERIFY2(damaged.stderrText().contains(broken), qPrintable(damaged.describe()));

    // Enrolling without a device is a usage error
    const CliResult noDevice = hub.cli({ QStringLiteral("forward"), QStringLiteral("enroll"),
        QStringLiteral("--name"), QStringLiteral("x") });
    CLOOP_COMPARE_EXIT(noDevice, 2);
    QVERIFY2(!noDevice.err.isEmpty(), qPrintable(noDevice.describe()));

    // A name the hub does not accept is refused with the rule, before it is sent
    const CliResult badName
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("enroll"), QStringLiteral("--name"),
            QStringLiteral("Bad/Name"), QStringLiteral("--usb"), QStringLiteral("1050:0407") });
    CLOOP_COMPARE_EXIT(badName, 2);
    QVERIFY2(badName.stderrText().contains(QLatin1String("name"))
            && badName.stderrText().contains(QLatin1String("Bad/Name")),
        qPrintable(badName.describe()));

    // Revoking what does not exist
    const CliResult unknown
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("revoke"), QStringLiteral("999") });
    CLOOP_COMPARE_EXIT(unknown, 1);
    QVERIFY2(unknown.stderrText().contains(QLatin1String("no forwarder")),
        qPrintable(unknown.describe()));

    // The same name twice
    const CliResult again
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("enroll"), QStringLiteral("--name"),
            QStringLiteral("cut-short"), QStringLiteral("--usb"), QStringLiteral("1050:0407") });
    QVERIFY2(again.exitCode != 0 && again.exitCode != -1, qPrintable(again.describe()));
    QVERIFY2(
        again.stderrText().contains(QLatin1String("already exists")), qPrintable(again.describe()));

    // A hub whose database file is noise refuses to start and names the file
    HubProcess damagedHub;
    QVERIFY2(damagedHub.initialise(), qPrintable(damagedHub.lastError()));
    {
        QFile database(damagedHub.databasePath());
        QVERIFY(database.open(QIODevice::WriteOnly));
        QByteArray noise(8192, Qt::Uninitialized);
        QRandomGenerator::system()->fillRange(
            reinterpret_cast<quint32 *>(noise.data()), noise.size() / 4);
        QVERIFY(database.write(noise) == noise.size());
    }
    const CliResult serve
        = damagedHub.cli({ QStringLiteral("hub"), QStringLiteral("serve"), QStringLiteral("--data"),
            damagedHub.dataDir(), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0") });
    QVERIFY2(serve.exitCode != 0 && !serve.timedOut, qPrintable(serve.describe()));
    QVERIFY2(serve.stderrText().contains(damagedHub.databasePath()), qPrintable(serve.describe()));
    QVERIFY(!QFile::exists(damagedHub.dataDir() + QLatin1String("/cli.json")));
}

void TestCliErrors::aMistypedWordGetsWhatWasMeantAndWhereTheUsageIs_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("meant");
    QTest::addColumn<QString>("usage");

    QTest::newRow("a command") << QStringList { QStringLiteral("projct") }
                               << QStringLiteral("did you mean \"project\"?")
                               << QStringLiteral("Run 'cloop --help' for usage.");
    QTest::newRow("a forward command")
        << QStringList { QStringLiteral("forward"), QStringLiteral("lst") }
        << QStringLiteral("did you mean \"list\"?")
        << QStringLiteral("Run 'cloop forward --help' for usage.");
    QTest::newRow("a run command")
        << QStringList { QStringLiteral("run"), QStringLiteral("cancle"), QStringLiteral("3") }
        << QStringLiteral("did you mean \"cancel\"?")
        << QStringLiteral("Run 'cloop run --help' for usage.");
    QTest::newRow("a nested command")
        << QStringList { QStringLiteral("executor"), QStringLiteral("virtual"),
               QStringLiteral("lits") }
        << QStringLiteral("did you mean \"list\"?")
        << QStringLiteral("Run 'cloop executor virtual --help' for usage.");
    QTest::newRow("a hub command") << QStringList { QStringLiteral("hub"), QStringLiteral("serv") }
                                   << QStringLiteral("did you mean \"serve\"?")
                                   << QStringLiteral("Run 'cloop hub --help' for usage.");
    QTest::newRow("an option") << QStringList { QStringLiteral("forward"), QStringLiteral("list"),
        QStringLiteral("--jsn") }
                               << QStringLiteral("unknown option --jsn (did you mean \"--json\"?)")
                               << QStringLiteral("Run 'cloop forward list --help' for usage.");
    QTest::newRow("an option with one dash")
        << QStringList { QStringLiteral("project"), QStringLiteral("list"),
               QStringLiteral("-json") }
        << QStringLiteral("unknown option -json (did you mean \"--json\"?)")
        << QStringLiteral("Run 'cloop project list --help' for usage.");
    QTest::newRow("a daemon's option") << QStringList { QStringLiteral("forward"),
        QStringLiteral("--token-fiel"), QStringLiteral("x") }
                                       << QStringLiteral("did you mean \"--token-file\"?")
                                       << QStringLiteral("Run 'cloop forward --help' for usage.");
    QTest::newRow("a missing argument")
        << QStringList { QStringLiteral("run"), QStringLiteral("show") }
        << QStringLiteral("missing argument") << QStringLiteral("Run 'cloop run show --help'");
}

void TestCliErrors::aMistypedWordGetsWhatWasMeantAndWhereTheUsageIs()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, meant);
    QFETCH(QString, usage);
    const CliResult typed = m_rig->hub().cli(arguments);
    CLOOP_COMPARE_EXIT(typed, 2);
    QVERIFY2(typed.stderrText().contains(meant), qPrintable(typed.describe()));
    QVERIFY2(typed.stderrText().contains(usage), qPrintable(typed.describe()));
    QVERIFY2(typed.out.isEmpty(), qPrintable(typed.describe()));
}

void TestCliErrors::everyFamilyListsItsCommandsWithAnExample()
{
    HubProcess &hub = m_rig->hub();
    const CliResult overview = hub.cli({ QStringLiteral("--help") });
    CLOOP_COMPARE_EXIT(overview, 0);
    // "  forward enroll   Enroll a forwarder; …": every command two words deep.
    static const QRegularExpression member(QStringLiteral("^  ([a-z]+) ([a-z][a-z-]*) +[A-Z]"));
    QMap<QString, QStringList> families;
    for (const QString &line : overview.stdoutText().split(u'\n')) {
        QVERIFY2(line.size() <= 100, qPrintable(QStringLiteral("too wide: ") + line));
        if (const QRegularExpressionMatch found = member.match(line); found.hasMatch())
            families[found.captured(1)].append(found.captured(2));
    }
    for (const QString &family :
        { QStringLiteral("hub"), QStringLiteral("forward"), QStringLiteral("approvals"),
            QStringLiteral("executor"), QStringLiteral("run"), QStringLiteral("project"),
            QStringLiteral("user"), QStringLiteral("token"), QStringLiteral("release") })
        QVERIFY2(families.contains(family), qPrintable(overview.stdoutText()));
    QVERIFY(families.value(QStringLiteral("forward")).contains(QStringLiteral("test")));
    QVERIFY(families.value(QStringLiteral("run")).contains(QStringLiteral("logs")));
    QVERIFY(families.value(QStringLiteral("executor")).contains(QStringLiteral("virtual")));

    for (auto family = families.cbegin(); family != families.cend(); ++family) {
        const CliResult help = hub.cli({ family.key(), QStringLiteral("--help") });
        CLOOP_COMPARE_EXIT(help, 0);
        for (const QString &command : family.value()) {
            // Each with its one-line summary and an example that uses it.
            const QString example
                = QStringLiteral("      $ cloop %1 %2").arg(family.key(), command);
            QVERIFY2(help.stdoutText().contains(QStringLiteral("\n  ") + command),
                qPrintable(help.describe()));
            QVERIFY2(help.stdoutText().contains(example), qPrintable(example + help.describe()));
        }
    }
    // The daemon's own commands still reach it through the umbrella.
    for (const QString &own :
        { QStringLiteral("install"), QStringLiteral("uninstall"), QStringLiteral("repin") }) {
        const CliResult help
            = hub.cli({ QStringLiteral("forward"), own, QStringLiteral("--help") });
        CLOOP_COMPARE_EXIT(help, 0);
        QVERIFY2(help.stdoutText().contains(QStringLiteral("cloop forward ") + own),
            qPrintable(help.describe()));
    }
    // The forwarder's own options follow its commands.
    const CliResult forward = hub.cli({ QStringLiteral("forward"), QStringLiteral("--help") });
    QVERIFY2(forward.stdoutText().contains(QLatin1String("--token-file <FILE>")),
        qPrintable(forward.describe()));
}

void TestCliErrors::argumentAndConfigurationErrorsExitWithTwo_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("why");

    const QString enroll = QStringLiteral("enroll");
    QTest::newRow("a forwarder's name") << QStringList { QStringLiteral("forward"), enroll,
        QStringLiteral("--name"), QStringLiteral("Lab 3"), QStringLiteral("--usb"),
        QStringLiteral("1050:0407") } << QStringLiteral("forwarder name \"Lab 3\" must be");
    QTest::newRow("a USB device") << QStringList { QStringLiteral("forward"), enroll,
        QStringLiteral("--name"), QStringLiteral("lab3"), QStringLiteral("--usb"),
        QStringLiteral("yubikey") }
                                  << QStringLiteral("--usb: ");
    QTest::newRow("an interface") << QStringList { QStringLiteral("forward"), enroll,
        QStringLiteral("--name"), QStringLiteral("lab3"), QStringLiteral("--interface"),
        QStringLiteral("eth/1") } << QStringLiteral("--interface: ");
    QTest::newRow("a token's lifetime") << QStringList { QStringLiteral("forward"), enroll,
        QStringLiteral("--name"), QStringLiteral("lab3"), QStringLiteral("--usb"),
        QStringLiteral("1050:0407"), QStringLiteral("--token-ttl"), QStringLiteral("soon") }
                                        << QStringLiteral("--token-ttl soon");
    QTest::newRow("an executor's name") << QStringList { QStringLiteral("executor"), enroll,
        QStringLiteral("--name"), QStringLiteral("-bench") }
                                        << QStringLiteral("executor name \"-bench\" must be");
    QTest::newRow("a hub URL without its scheme") << QStringList { QStringLiteral("whoami"),
        QStringLiteral("--hub"), QStringLiteral("127.0.0.1:7443") }
                                                  << QStringLiteral("write wss://127.0.0.1:7443");
    QTest::newRow("a listening address without its port") << QStringList { QStringLiteral("hub"),
        QStringLiteral("serve"), QStringLiteral("--listen"), QStringLiteral("localhost") }
                                                          << QStringLiteral("is not HOST:PORT");
}

void TestCliErrors::argumentAndConfigurationErrorsExitWithTwo()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, why);
    HubProcess &hub = m_rig->hub();
    const QJsonArray before = hub.cliItems({ QStringLiteral("forward"), QStringLiteral("list"),
        QStringLiteral("--all"), QStringLiteral("--json") });
    const CliResult refused = hub.cli(arguments);
    CLOOP_COMPARE_EXIT(refused, 2);
    QVERIFY2(refused.stderrText().contains(why), qPrintable(refused.describe()));
    // Checked before anything was sent: nothing enrolled.
    QCOMPARE(hub.cliItems({ QStringLiteral("forward"), QStringLiteral("list"),
                              QStringLiteral("--all"), QStringLiteral("--json") })
                 .size(),
        before.size());
}

void TestCliErrors::aHubWithoutItsCertificateIsAConfigurationError()
{
    const QString data = m_rig->path(QStringLiteral("no-certificate"));
    QVERIFY(QDir().mkpath(data));
    const CliResult serve = m_rig->hub().cli(
        { QStringLiteral("hub"), QStringLiteral("serve"), QStringLiteral("--data"), data,
            QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0") });
    CLOOP_COMPARE_EXIT(serve, 2);
    QVERIFY2(serve.stderrText().contains(QLatin1String("cloop hub tls-init")),
        qPrintable(serve.describe()));
}

void TestCliErrors::aMalformedListingIsRefusedSayingWhere_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("why");
    QTest::newRow("an entry that is no object")
        << QByteArray(R"({"forwarders":[{"id":1,"name":"lab-a"},7]})")
        << QStringLiteral("bad_answer")
        << QStringLiteral("entry 2 of \"forwarders\" is not an object");
    QTest::newRow("a member that is no JSON, after the list")
        << QByteArray(R"({"forwarders":[{"id":1,"name":"lab-a"}],"more":tru})")
        << QStringLiteral("bad_answer") << QStringLiteral("the answer is not JSON");
    QTest::newRow("the list twice")
        << QByteArray(R"({"forwarders":[{"id":1,"name":"lab-a"}],"forwarders":[]})")
        << QStringLiteral("bad_answer") << QStringLiteral("\"forwarders\" appears twice");
    QTest::newRow("a field of the wrong type")
        << QByteArray(R"({"forwarders":[{"id":1,"name":"lab-a"},{"id":"two"}]})")
        << QStringLiteral("invalid_record") << QStringLiteral("\"id\"");
}

void TestCliErrors::aMalformedListingIsRefusedSayingWhere()
{
    QFETCH(QByteArray, answer);
    QFETCH(QString, code);
    QFETCH(QString, why);
    // Something holding the hub's own key (so the pin passes) answers every
    // request with the listing under test, as a hub with a bug or a
    // corrupted answer would.
    HubProcess &hub = m_rig->hub();
    const quint16 port = hub.port();
    QCOMPARE(hub.stop(), 0);
    QFile certificate(hub.dataDir() + QLatin1String("/tls/cert.pem"));
    QFile key(hub.dataDir() + QLatin1String("/tls/key.pem"));
    QVERIFY(certificate.open(QIODevice::ReadOnly) && key.open(QIODevice::ReadOnly));
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificate(QSslCertificate(&certificate, QSsl::Pem));
    tls.setPrivateKey(QSslKey(&key, QSsl::Ec, QSsl::Pem));
    if (tls.privateKey().isNull()) {
        key.seek(0);
        tls.setPrivateKey(QSslKey(&key, QSsl::Rsa, QSsl::Pem));
    }
    QVERIFY(!tls.localCertificate().isNull() && !tls.privateKey().isNull());
    QSslServer server;
    server.setSslConfiguration(tls);
    int requests = 0;
    connect(&server, &QSslServer::pendingConnectionAvailable, &server, [&] {
        while (QTcpSocket *socket = server.nextPendingConnection()) {
            auto *received = new QByteArray;
            connect(socket, &QTcpSocket::disconnected, socket, [socket, received] {
                delete received;
                socket->deleteLater();
            });
            connect(socket, &QTcpSocket::readyRead, socket, [&, socket, received] {
                received->append(socket->readAll());
                if (!received->contains("\r\n\r\n"))
                    return;
                ++requests;
                received->clear();
                socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "Content-Length: "
                    + QByteArray::number(answer.size()) + "\r\n\r\n" + answer);
            });
        }
    });
    QVERIFY2(server.listen(QHostAddress::LocalHost, port), qPrintable(server.errorString()));

    const CliResult listed = hub.cli({ QStringLiteral("forward"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(listed, 1);
    QVERIFY2(requests >= 1, qPrintable(listed.describe()));
    QVERIFY2(listed.stderrText().contains(why), qPrintable(listed.describe()));
    // Nothing of the readable entries is printed as if the listing were whole.
    QVERIFY2(!listed.stdoutText().contains(QLatin1String("lab-a")), qPrintable(listed.describe()));

    const CliResult asJson
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("list"), QStringLiteral("--json") });
    CLOOP_COMPARE_EXIT(asJson, 1);
    const QJsonObject error
        = QJsonDocument::fromJson(asJson.err).object().value(QLatin1String("error")).toObject();
    QCOMPARE(error.value(QLatin1String("code")).toString(), code);
    QVERIFY2(error.value(QLatin1String("message")).toString().contains(why),
        qPrintable(asJson.describe()));
    QVERIFY2(asJson.out.isEmpty(), qPrintable(asJson.describe()));
}

QTEST_GUILESS_MAIN(TestCliErrors)
#include "tst_clierrors.moc"
