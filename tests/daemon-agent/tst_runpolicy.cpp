// Unit tests of what the agent lets a hub's run.start ask for
// (daemon-agent/runs/runpolicy.h): nothing the hub sends may reach beyond
// the agent's own configuration (images from registries only, runtimes by
// the name the engine registered, host-process runs only where the
// workload cannot run as the agent's own user).

#include "daemon-agent/runs/runpolicy.h"

#include <QTest>

using namespace cloop;
using namespace cloop::agent;
using Mode = protocol::AgentCapabilities::Mode;

class TestRunPolicy final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void images_data();
    void images();
    void runtimes_data();
    void runtimes();
    void modes_data();
    void modes();
    void aHostProcessRunIgnoresImageAndRuntime();
};

void TestRunPolicy::images_data()
{
    QTest::addColumn<QString>("image");
    QTest::addColumn<bool>("allowed");

    QTest::newRow("short name") << QStringLiteral("busybox") << true;
    QTest::newRow("name and tag") << QStringLiteral("alpine:3.19") << true;
    QTest::newRow("the default image") << QStringLiteral("localhost/cloop-busybox:latest") << true;
    QTest::newRow("registry with port")
        << QStringLiteral("registry.lab:5000/team/tool:v1.2") << true;
    QTest::newRow("digest") << QStringLiteral("quay.io/x/y@sha256:") + QString(64, QLatin1Char('a'))
                            << true;
    // containers/image transports read an image from this machine.
    QTest::newRow("dir: a host folder") << QStringLiteral("dir:/root/.cloop") << false;
    QTest::newRow("dir: relative") << QStringLiteral("dir:work") << false;
    QTest::newRow("oci-archive: a host file") << QStringLiteral("oci-archive:/etc/shadow") << false;
    QTest::newRow("oci-archive: relative") << QStringLiteral("oci-archive:x") << false;
    QTest::newRow("docker-archive") << QStringLiteral("docker-archive:x") << false;
    QTest::newRow("oci layout") << QStringLiteral("oci:layout") << false;
    QTest::newRow("docker daemon") << QStringLiteral("docker-daemon:busybox:latest") << false;
    QTest::newRow("containers-storage with a store")
        << QStringLiteral("containers-storage:[overlay@/var/lib/x+/run/x]busybox") << false;
    QTest::newRow("docker scheme") << QStringLiteral("docker://busybox") << false;
    QTest::newRow("a path") << QStringLiteral("/var/lib/images/x") << false;
    QTest::newRow("dot-dot") << QStringLiteral("../x") << false;
    QTest::newRow("an option") << QStringLiteral("--privileged") << false;
    QTest::newRow("upper case path") << QStringLiteral("Busybox") << false;
    QTest::newRow("space") << QStringLiteral("busybox latest") << false;
    QTest::newRow("overlong") << QString(300, QLatin1Char('a')) << false;
}

void TestRunPolicy::images()
{
    QFETCH(QString, image);
    QFETCH(bool, allowed);
    const Status checked = RunPolicy::checkImage(image);
    QCOMPARE(checked.ok(), allowed);
    if (!allowed) {
        QCOMPARE(checked.error().code, QStringLiteral("run_not_allowed"));
        // And through the whole check of a sandboxed run.
        protocol::RunStart run;
        run.image = image;
        QVERIFY(!RunPolicy(Mode::Container, true).check(run).ok());
    }
}

void TestRunPolicy::runtimes_data()
{
    QTest::addColumn<QString>("runtime");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("runc") << QStringLiteral("runc") << true;
    QTest::newRow("crun") << QStringLiteral("crun") << true;
    QTest::newRow("kata-qemu") << QStringLiteral("kata-qemu") << true;
    QTest::newRow("an absolute path") << QStringLiteral("/usr/bin/runc") << false;
    QTest::newRow("a workload's file") << QStringLiteral("/root/.cloop/work/runs/3/evil") << false;
    QTest::newRow("a relative path") << QStringLiteral("runs/3/evil") << false;
    QTest::newRow("dot-dot") << QStringLiteral("..") << false;
    QTest::newRow("an option") << QStringLiteral("--root=/") << false;
    QTest::newRow("space") << QStringLiteral("runc x") << false;
}

void TestRunPolicy::runtimes()
{
    QFETCH(QString, runtime);
    QFETCH(bool, allowed);
    protocol::RunStart run;
    run.runtime = runtime;
    const Status checked = RunPolicy(Mode::Container, true).check(run);
    QCOMPARE(checked.ok(), allowed);
    if (!allowed) {
        QCOMPARE(checked.error().code, QStringLiteral("run_not_allowed"));
        QVERIFY2(checked.error().message.contains(runtime.left(20)),
            qPrintable(checked.error().message));
    }
}

void TestRunPolicy::modes_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<bool>("root");
    QTest::addColumn<bool>("hostProcess");
    QTest::addColumn<QString>("refusal"); // empty: allowed

    const int container = int(Mode::Container);
    const int host = int(Mode::Host);
    QTest::newRow("sandboxed run, container agent") << container << true << false << QString();
    QTest::newRow("sandboxed run, container agent not root")
        << container << false << false << QString();
    QTest::newRow("host run, container agent")
        << container << true << true << QStringLiteral("need an agent in host mode");
    QTest::newRow("sandboxed run, host agent")
        << host << true << false << QStringLiteral("no sandbox");
    QTest::newRow("host run, root host agent") << host << true << true << QString();
    // Its own user could read the agent's credential: refused, saying so.
    QTest::newRow("host run, host agent not root")
        << host << false << true << QStringLiteral("does not run as root");
}

void TestRunPolicy::modes()
{
    QFETCH(int, mode);
    QFETCH(bool, root);
    QFETCH(bool, hostProcess);
    QFETCH(QString, refusal);
    protocol::RunStart run;
    run.runId = 7;
    run.argv = { QStringLiteral("true") };
    run.workdir = QStringLiteral("runs/7");
    run.hostProcess = hostProcess;
    const Status checked = RunPolicy(Mode(mode), root).check(run);
    if (refusal.isEmpty()) {
        QVERIFY2(checked.ok(), qPrintable(checked.ok() ? QString() : checked.error().message));
        return;
    }
    QVERIFY(!checked.ok());
    QVERIFY2(checked.error().message.contains(refusal), qPrintable(checked.error().message));
}

void TestRunPolicy::aHostProcessRunIgnoresImageAndRuntime()
{
    // Neither is used without a sandbox, so neither can widen anything.
    protocol::RunStart run;
    run.hostProcess = true;
    run.image = QStringLiteral("dir:/root");
    run.runtime = QStringLiteral("/tmp/x");
    QVERIFY(RunPolicy(Mode::Host, true).check(run).ok());
}

QTEST_GUILESS_MAIN(TestRunPolicy)
#include "tst_runpolicy.moc"
