#include "bench/sandboxruns.h"

#include "bench/benchfailed.h"
#include "support/forwarderprocess.h"
#include "support/hubprocess.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>

#include <unistd.h>

namespace cloop::bench {

using testing::CliResult;

void mustRun(const QString &script)
{
    const CliResult ran = testing::runProgram(QStringLiteral("sh"),
        { QStringLiteral("-c"), script }, QProcessEnvironment::systemEnvironment(), 120'000);
    if (ran.exitCode != 0)
        fail(ran.describe());
}

QString IperfImage::unavailable()
{
    if (QStandardPaths::findExecutable(QStringLiteral("iperf3")).isEmpty())
        return QStringLiteral("iperf3 is not installed (scripts/install-deps installs it)");
    if (!QFileInfo::exists(QStringLiteral("/bin/busybox")))
        return QStringLiteral("busybox-static is not installed");
    return {};
}

IperfImage::IperfImage()
    : m_name(QStringLiteral("localhost/cloop-bench-iperf3:%1").arg(::getpid()))
    , m_removal(std::make_unique<UndoOnExit>(
          QStringLiteral("podman rmi -f %1 >/dev/null 2>&1").arg(m_name)))
{
    QTemporaryDir root;
    const QString rootfs = root.filePath(QStringLiteral("rootfs"));
    const QString iperf = QStandardPaths::findExecutable(QStringLiteral("iperf3"));
    mustRun(QStringLiteral(
        "set -e; r='%1'; mkdir -p $r/bin $r/usr/bin $r/tmp $r/work $r/etc; chmod 1777 $r/tmp; "
        "cp /bin/busybox $r/bin/busybox; "
        "for a in sh ping sleep cat ls echo ip test awk grep; do ln -s busybox $r/bin/$a; done; "
        "cp -L '%2' $r/usr/bin/iperf3; "
        "for lib in $(ldd '%2' | grep -o '/[^ ]*'); do mkdir -p $r$(dirname $lib); cp -L $lib "
        "$r$lib; done; "
        "echo 'root:x:0:0::/:/bin/sh' > $r/etc/passwd; "
        "tar -C $r -c . | podman import --quiet - %3 >/dev/null")
                .arg(rootfs, iperf, m_name));
}

QString iperfLine(const QString &address, int seconds)
{
    return QStringLiteral("iperf3 -J -N -c %1 -t %2").arg(address).arg(seconds);
}

double gbitsFromIperf(const QByteArray &json)
{
    const QJsonObject end
        = QJsonDocument::fromJson(json).object().value(QLatin1String("end")).toObject();
    return end.value(QLatin1String("sum_received"))
               .toObject()
               .value(QLatin1String("bits_per_second"))
               .toDouble()
        / 1e9;
}

QString awaitForwardedAddress(const QString &address)
{
    return QStringLiteral(
        "i=0; while ! ip -o addr show fwd0 2>/dev/null | grep -q '%1/' && [ $i -lt 600 ]; do "
        "sleep 0.1; i=$((i+1)); done; ")
        .arg(address);
}

QList<qint64> cancelRuns(testing::HubProcess &hub, const QList<qint64> &runs,
    const QList<const testing::ForwarderProcess *> &agents, int boundMs)
{
    for (const qint64 run : runs)
        hub.cli({ QStringLiteral("run"), QStringLiteral("cancel"), QString::number(run) });
    QList<qint64> unfinished;
    // Each look reads the agents' output once, not once a run. A run no
    // agent ever spoke of was never taken: its cancelling ended it; one
    // cancelled before its sandbox started is refused, not finished.
    (void)testing::waitUntil(
        [&] {
            QString said;
            for (const testing::ForwarderProcess *agent : agents)
                said += agent->stderrText();
            unfinished.clear();
            for (const qint64 run : runs) {
                const QString name = QStringLiteral("run %1 ").arg(run);
                if (said.contains(name) && !said.contains(name + QStringLiteral("finished"))
                    && !said.contains(name + QStringLiteral("refused")))
                    unfinished.append(run);
            }
            return unfinished.isEmpty();
        },
        boundMs);
    return unfinished;
}

} // namespace cloop::bench
