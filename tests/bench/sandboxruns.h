#pragma once

// What the benchmarks that measure TCP from a sandboxed run through a
// forwarded segment share: the sandbox's image (busybox and the host's
// iperf3), the one iperf3 line every path runs and the figure read from
// it, the start of a workload that waits for its forwarded interface, and
// ending the runs before the agents.

#include "bench/benchcleanup.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace cloop::testing {
class ForwarderProcess;
class HubProcess;
} // namespace cloop::testing

namespace cloop::bench {

// Runs `script` with sh to its end; throws BenchFailed (benchfailed.h) with
// what it printed when it fails.
void mustRun(const QString &script);

// busybox with a few applets, and iperf3 with every library it links,
// imported under a tag of this process's own, so a benchmark running beside
// it keeps its image; removed again when this goes, or at a stopping
// signal. The constructor throws BenchFailed when the import fails.
class IperfImage
{
public:
    // Why the image cannot be made here (iperf3 or busybox missing), or empty.
    static QString unavailable();

    IperfImage();
    IperfImage(const IperfImage &) = delete;
    IperfImage &operator=(const IperfImage &) = delete;

    QString name() const { return m_name; }

private:
    QString m_name;
    std::unique_ptr<UndoOnExit> m_removal;
};

// iperf3's client against `address` for `seconds`, with TCP_NODELAY (the
// chain's own connections have it too) and its report as JSON.
QString iperfLine(const QString &address, int seconds);

// The receiver's figure in iperf3's JSON report, in Gbit/s; 0 without one.
double gbitsFromIperf(const QByteArray &json);

// The start of a sandboxed workload: waits (a minute at most: many
// sandboxes may be starting on two cores) until the run's forwarded
// interface fwd0 carries `address`, which its binding gives it, then goes
// on either way; a later step that needs it says why.
QString awaitForwardedAddress(const QString &address);

// Cancels `runs` and waits (`boundMs` at most) until one of `agents` says
// each it took is over; returns those it did not. The runs end before
// the agents do, or their sandboxes would outlive the benchmark: an agent
// that stops leaves its runs to its next start.
QList<qint64> cancelRuns(testing::HubProcess &hub, const QList<qint64> &runs,
    const QList<const testing::ForwarderProcess *> &agents, int boundMs = 10 * 60 * 1000);

} // namespace cloop::bench
