#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>

#include <chrono>
#include <functional>
#include <memory>

namespace prometheus {
class Registry;
template <typename T> class Family;
class Counter;
class Gauge;
class Histogram;
} // namespace prometheus

namespace cloop::hub {

struct HubEvent;

// What the hub tells Prometheus (GET /metrics on --metrics-listen), in the
// text format, by the naming rules: the prefix cloop_, base units, _total
// on counters, labels of few values (a binding's id, a route's pattern,
// an error code; never a user, a run or an address).
//
// Counters are fed as things happen (events, requests, statements);
// gauges, and the bytes the device streams relayed, are read from the hub
// when a scrape asks, by the sampler the hub sets.
class HubMetrics
{
public:
    struct RelayedBytes
    {
        quint64 toAgent = 0;
        quint64 toForwarder = 0;
    };
    struct Sample
    {
        int forwardersConnected = 0;
        int executorsConnected = 0;
        int deviceStreamsOpen = 0;
        int runsQueued = 0;
        QHash<qint64, RelayedBytes> relayedByBinding; // since the hub started
    };
    using Sampler = std::function<Sample()>;

    struct BuildInfo
    {
        QString version;
        QString commit;
        int protocol = 0;
    };

    explicit HubMetrics(const BuildInfo &build);
    ~HubMetrics();
    HubMetrics(const HubMetrics &) = delete;
    HubMetrics &operator=(const HubMetrics &) = delete;

    void setSampler(Sampler sampler) { m_sampler = std::move(sampler); }

    void recordEvent(const HubEvent &event);
    void recordRequest(
        const QByteArray &method, const QString &route, std::chrono::nanoseconds took);
    void recordStatement(std::chrono::nanoseconds took);
    void recordRefusal(const QString &reason);

    // The text exposition of every metric, after a fresh sample.
    QByteArray scrape();

private:
    void sample();

    std::shared_ptr<prometheus::Registry> m_registry;
    prometheus::Family<prometheus::Gauge> &m_buildInfo;
    prometheus::Gauge &m_forwarders;
    prometheus::Gauge &m_executors;
    prometheus::Gauge &m_streams;
    prometheus::Gauge &m_queued;
    prometheus::Family<prometheus::Counter> &m_relayed;
    prometheus::Family<prometheus::Counter> &m_refusals;
    prometheus::Family<prometheus::Counter> &m_revocations;
    prometheus::Family<prometheus::Histogram> &m_requests;
    prometheus::Histogram &m_statements;
    Sampler m_sampler;
    QHash<qint64, RelayedBytes> m_relayedSeen;
};

} // namespace cloop::hub
