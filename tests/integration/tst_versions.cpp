// Integration: every program says which build it is, the same way, without
// a display or a hub: version, commit, protocol and the libraries it runs on.

#include "cloop/buildinfo.h"
#include "common/protocol/protocolversion.h"
#include "support/processutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestVersions final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyProgramNamesItsBuild_data();
    void everyProgramNamesItsBuild();
    void umbrellaWritesItAsJson();
    void umbrellaRefusesWhatItDoesNotTake();
    void theDashboardHelpsWithoutADisplay();
};

namespace {
struct Finished
{
    int exitCode = -1;
    QString out;
    QString err;
};

Finished runProgram(const QString &program, const QStringList &arguments)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    // The dashboard must answer without a display to connect to.
    environment.remove(u"DISPLAY"_s);
    environment.remove(u"WAYLAND_DISPLAY"_s);
    process.setProcessEnvironment(environment);
    process.start(binaryPath(program), arguments);
    if (!process.waitForFinished(20000))
        return {};
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
        QString::fromUtf8(process.readAllStandardOutput()),
        QString::fromUtf8(process.readAllStandardError()) };
}
} // namespace

void TestVersions::everyProgramNamesItsBuild_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("name");
    QTest::newRow("cloop") << u"cloop"_s << QStringList { u"--version"_s } << u"cloop"_s;
    QTest::newRow("cloop version") << u"cloop"_s << QStringList { u"version"_s } << u"cloop"_s;
    QTest::newRow("cloop-hub") << u"cloop-hub"_s << QStringList { u"--version"_s }
                               << u"cloop-hub"_s;
    QTest::newRow("cloop-forward")
        << u"cloop-forward"_s << QStringList { u"--version"_s } << u"cloop forward"_s;
    QTest::newRow("cloop-agent") << u"cloop-agent"_s << QStringList { u"--version"_s }
                                 << u"cloop executor agent"_s;
    QTest::newRow("cloop-dashboard")
        << u"cloop-dashboard"_s << QStringList { u"--version"_s } << u"cloop-dashboard"_s;
}

void TestVersions::everyProgramNamesItsBuild()
{
    QFETCH(QString, program);
    QFETCH(QStringList, arguments);
    QFETCH(QString, name);
    const Finished finished = runProgram(program, arguments);
    QCOMPARE(finished.exitCode, 0);
    QVERIFY2(finished.err.isEmpty(), qPrintable(finished.err));
    const QRegularExpression shape(
        u"^(.+) (\\S+) \\(commit ([0-9a-f]{12}(-modified)?|unknown), protocol (\\d+); "
        "Qt (\\d+\\.\\d+\\.\\d+), OpenSSL (\\d+\\.\\d+\\.\\d+\\S*)\\)\\n$"_s);
    const auto match = shape.match(finished.out);
    QVERIFY2(match.hasMatch(), qPrintable(finished.out));
    QCOMPARE(match.captured(1), name);
    QCOMPARE(match.captured(2), QString::fromLatin1(buildinfo::kVersion));
    QCOMPARE(match.captured(5).toInt(), protocol::kVersion);
    // The Qt it runs on, which is this test's too.
    QCOMPARE(match.captured(6), QString::fromLatin1(qVersion()));
}

void TestVersions::umbrellaWritesItAsJson()
{
    const Finished finished = runProgram(u"cloop"_s, { u"version"_s, u"--json"_s });
    QCOMPARE(finished.exitCode, 0);
    QJsonParseError error;
    const QJsonObject report = QJsonDocument::fromJson(finished.out.toUtf8(), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(report.value("program"_L1).toString(), u"cloop"_s);
    QCOMPARE(report.value("version"_L1).toString(), QString::fromLatin1(buildinfo::kVersion));
    QCOMPARE(report.value("protocol"_L1).toInt(), protocol::kVersion);
    QCOMPARE(report.value("qt"_L1).toString(), QString::fromLatin1(qVersion()));
    QVERIFY(!report.value("openssl"_L1).toString().isEmpty());
    const QString commit = report.value("commit"_L1).toString();
    QVERIFY2(QRegularExpression(u"^([0-9a-f]{40}(-modified)?|unknown)$"_s).match(commit).hasMatch(),
        qPrintable(commit));
}

void TestVersions::umbrellaRefusesWhatItDoesNotTake()
{
    const Finished finished = runProgram(u"cloop"_s, { u"version"_s, u"--yaml"_s });
    QCOMPARE(finished.exitCode, 2);
    QVERIFY(finished.out.isEmpty());
    QVERIFY2(finished.err.contains(u"--yaml"_s), qPrintable(finished.err));
}

void TestVersions::theDashboardHelpsWithoutADisplay()
{
    const Finished finished = runProgram(u"cloop-dashboard"_s, { u"--help"_s });
    QCOMPARE(finished.exitCode, 0);
    QVERIFY2(
        finished.out.startsWith(u"Usage: cloop-dashboard [options]\n"_s), qPrintable(finished.out));
    for (const char *option :
        { "--hub <URL>", "--pin <PIN>", "--lang <LANGUAGE>", "--theme <THEME>" })
        QVERIFY2(finished.out.contains(QLatin1String(option)), option);
    QVERIFY2(finished.err.isEmpty(), qPrintable(finished.err));
}

QTEST_GUILESS_MAIN(TestVersions)
#include "tst_versions.moc"
