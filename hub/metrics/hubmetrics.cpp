#include "hub/metrics/hubmetrics.h"

#include "common/api/hubeventname.h"
#include "hub/domain/eventbus.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace cloop::hub {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

namespace {

std::string text(const QString &value)
{
    return value.toStdString();
}

double seconds(std::chrono::nanoseconds took)
{
    return std::chrono::duration<double>(took).count();
}

// Admin API calls: from a cached read to a run's whole log page.
const prometheus::Histogram::BucketBoundaries kRequestBuckets { 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
// One SQL statement: SQLite answers in microseconds, PostgreSQL over a network in milliseconds.
const prometheus::Histogram::BucketBoundaries kStatementBuckets { 0.0001, 0.00025, 0.0005, 0.001,
    0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1 };

} // namespace

HubMetrics::HubMetrics(const BuildInfo &build)
    : m_registry(std::make_shared<prometheus::Registry>())
    , m_buildInfo(BuildGauge()
                      .Name("cloop_build_info")
                      .Help("The hub's build: always 1, its labels say which")
                      .Register(*m_registry))
    , m_forwarders(BuildGauge()
                       .Name("cloop_forwarders_connected")
                       .Help("Forwarders with a live tunnel to this hub")
                       .Register(*m_registry)
                       .Add({}))
    , m_executors(BuildGauge()
                      .Name("cloop_executors_connected")
                      .Help("Executor agents with a live tunnel to this hub")
                      .Register(*m_registry)
                      .Add({}))
    , m_streams(BuildGauge()
                    .Name("cloop_device_streams_open")
                    .Help("Devices carried to runs now, one stream each")
                    .Register(*m_registry)
                    .Add({}))
    , m_queued(BuildGauge()
                   .Name("cloop_runs_queued")
                   .Help("Runs waiting for an executor or a device")
                   .Register(*m_registry)
                   .Add({}))
    , m_relayed(
          BuildCounter()
              .Name("cloop_relayed_bytes_total")
              .Help(
                  "Bytes the hub relayed between a binding's forwarder and the agents of its runs")
              .Register(*m_registry))
    , m_refusals(BuildCounter()
                     .Name("cloop_dispatch_refusals_total")
                     .Help("Runs the dispatcher refused, by the error code of the reason")
                     .Register(*m_registry))
    , m_revocations(BuildCounter()
                        .Name("cloop_revocations_total")
                        .Help("Credentials revoked, by kind")
                        .Register(*m_registry))
    , m_requests(
          BuildHistogram()
              .Name("cloop_api_request_duration_seconds")
              .Help("Admin API requests, from the whole request read to the answer, by route")
              .Register(*m_registry))
    , m_statements(BuildHistogram()
                       .Name("cloop_db_statement_duration_seconds")
                       .Help("SQL statements the hub ran")
                       .Register(*m_registry)
                       .Add({}, kStatementBuckets))
{
    m_buildInfo
        .Add({ { "version", text(build.version) }, { "commit", text(build.commit) },
            { "protocol", std::to_string(build.protocol) } })
        .Set(1);
    // Every kind is there from the start, at 0: a rate over a counter that
    // appears only with its first increment misses that increment.
    for (const char *kind : { "forwarder", "executor", "token" })
        m_revocations.Add({ { "kind", kind } });
}

HubMetrics::~HubMetrics() = default;

void HubMetrics::recordEvent(const HubEvent &event)
{
    namespace name = api::hubeventname;
    const char *kind = event.name == name::kForwarderRevoked ? "forwarder"
        : event.name == name::kExecutorRevoked               ? "executor"
        : event.name == name::kTokenRevoked                  ? "token"
                                                             : nullptr;
    if (kind)
        m_revocations.Add({ { "kind", kind } }).Increment();
}

void HubMetrics::recordRequest(
    const QByteArray &method, const QString &route, std::chrono::nanoseconds took)
{
    m_requests
        .Add({ { "method", method.toStdString() },
                 { "route", route.isEmpty() ? std::string("unmatched") : text(route) } },
            kRequestBuckets)
        .Observe(seconds(took));
}

void HubMetrics::recordStatement(std::chrono::nanoseconds took)
{
    m_statements.Observe(seconds(took));
}

void HubMetrics::recordRefusal(const QString &reason)
{
    m_refusals.Add({ { "reason", text(reason) } }).Increment();
}

void HubMetrics::sample()
{
    if (!m_sampler)
        return;
    const Sample now = m_sampler();
    m_forwarders.Set(now.forwardersConnected);
    m_executors.Set(now.executorsConnected);
    m_streams.Set(now.deviceStreamsOpen);
    m_queued.Set(now.runsQueued);
    for (auto binding = now.relayedByBinding.cbegin(); binding != now.relayedByBinding.cend();
         ++binding) {
        RelayedBytes &seen = m_relayedSeen[binding.key()];
        const std::string id = std::to_string(binding.key());
        // The totals only grow; what grew since the last scrape is added.
        const auto add = [&](const char *direction, quint64 total, quint64 &before) {
            if (total > before)
                m_relayed.Add({ { "binding", id }, { "direction", direction } })
                    .Increment(double(total - before));
            before = std::max(before, total);
        };
        add("to_agent", binding->toAgent, seen.toAgent);
        add("to_forwarder", binding->toForwarder, seen.toForwarder);
    }
}

QByteArray HubMetrics::scrape()
{
    sample();
    const std::string exposition = prometheus::TextSerializer().Serialize(m_registry->Collect());
    return QByteArray::fromStdString(exposition);
}

} // namespace cloop::hub
