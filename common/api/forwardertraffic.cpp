#include "common/api/forwardertraffic.h"

namespace cloop::api {

using namespace Qt::StringLiterals;

namespace {

// Counts of bytes, frames or drops: one whole number a step.
QList<qint64> stepCounts(RecordReader &read, QLatin1StringView key, qint64 steps)
{
    const QJsonArray values = read.array(key);
    if (values.size() != steps) {
        read.fail(
            QStringLiteral("\"%1\" holds %2 steps, not %3").arg(key).arg(values.size()).arg(steps));
        return {};
    }
    QList<qint64> counts;
    counts.reserve(values.size());
    for (const QJsonValue &value : values) {
        const double number = value.toDouble(-1);
        // JSON numbers are doubles: a count is whole, not negative, and exact.
        if (!value.isDouble() || number < 0 || number > double(1LL << 53)
            || number != double(qint64(number))) {
            read.fail(QStringLiteral("\"%1\" must hold counts").arg(key));
            return {};
        }
        counts.append(qint64(number));
    }
    return counts;
}

} // namespace

Result<ForwarderTraffic> ForwarderTraffic::fromJson(const QJsonObject &object)
{
    RecordReader read(object, "traffic"_L1);
    ForwarderTraffic traffic;
    traffic.stepSeconds = read.integer("step_seconds"_L1);
    traffic.steps = read.integer("steps"_L1);
    traffic.until = read.time("until"_L1);
    if (traffic.stepSeconds < 1)
        read.fail(QStringLiteral("\"step_seconds\" must be a second or more"));
    if (traffic.steps < 0 || traffic.steps > kMaxSteps) {
        read.fail(QStringLiteral("\"steps\" must be from 0 to %1").arg(kMaxSteps));
        return read.finish(ForwarderTraffic {});
    }
    traffic.items = read.objects<Item>("items"_L1, [&traffic](RecordReader &entry) {
        Item item;
        item.forwarderId = entry.integer("forwarder_id"_L1);
        item.toAgentBytes = stepCounts(entry, "to_agent_bytes"_L1, traffic.steps);
        item.toForwarderBytes = stepCounts(entry, "to_forwarder_bytes"_L1, traffic.steps);
        // All four or none: frames without drops would read as none dropped.
        if (entry.source().contains("to_agent_frames"_L1)) {
            const QString unit = entry.text("unit"_L1);
            item.urbs = unit == "urbs"_L1;
            if (!item.urbs && unit != "frames"_L1)
                entry.fail(QStringLiteral("\"unit\" is neither frames nor urbs"));
            item.toAgentFrames = stepCounts(entry, "to_agent_frames"_L1, traffic.steps);
            item.toForwarderFrames = stepCounts(entry, "to_forwarder_frames"_L1, traffic.steps);
            item.droppedToAgent = stepCounts(entry, "dropped_to_agent"_L1, traffic.steps);
            item.droppedToForwarder = stepCounts(entry, "dropped_to_forwarder"_L1, traffic.steps);
        }
        return item;
    });
    return read.finish(std::move(traffic));
}

const ForwarderTraffic::Item *ForwarderTraffic::itemOf(qint64 forwarderId) const
{
    for (const Item &item : items)
        if (item.forwarderId == forwarderId)
            return &item;
    return nullptr;
}

} // namespace cloop::api
