#include "hub/edge/preauthpool.h"

#include <QHash>

#include <algorithm>
#include <map>
#include <set>

namespace cloop::hub::edge {

QByteArray sourceKeyOf(const QHostAddress &address)
{
    bool isV4 = false;
    const quint32 v4 = address.toIPv4Address(&isV4); // also unwraps ::ffff:a.b.c.d
    if (isV4) {
        QByteArray key(5, '\0');
        key[0] = '4';
        for (int i = 0; i < 4; ++i)
            key[i + 1] = static_cast<char>((v4 >> (24 - 8 * i)) & 0xff);
        return key;
    }
    const Q_IPV6ADDR v6 = address.toIPv6Address();
    QByteArray key(9, '\0');
    key[0] = '6';
    for (int i = 0; i < 8; ++i)
        key[i + 1] = static_cast<char>(v6[i]);
    return key;
}

struct PoolState
{
    struct Entry
    {
        QByteArray source;
        PreAuthPool::Evict evict;
    };

    struct Source
    {
        std::set<quint64> places; // ids grow with age: begin() is the oldest
        double tokens = 0;
        qint64 refilledAtMs = 0;
    };

    PreAuthPool::Limits limits;
    std::map<quint64, Entry> entries;
    QHash<QByteArray, Source> sources;
    quint64 nextId = 1;
    quint64 evicted = 0;
    quint64 refused = 0;

    void refill(Source &source, qint64 nowMs) const
    {
        const double elapsed = std::max<qint64>(0, nowMs - source.refilledAtMs) / 1000.0;
        source.tokens
            = std::min<double>(limits.admitBurst, source.tokens + elapsed * limits.admitPerSecond);
        source.refilledAtMs = nowMs;
    }

    void release(quint64 id)
    {
        const auto it = entries.find(id);
        if (it == entries.end())
            return;
        const auto source = sources.find(it->second.source);
        if (source != sources.end())
            source->places.erase(id);
        entries.erase(it);
    }

    // Forgets sources with no place whose rate has refilled: remembering
    // them would change nothing.
    void prune(qint64 nowMs)
    {
        for (auto it = sources.begin(); it != sources.end();) {
            if (it->places.empty()) {
                refill(*it, nowMs);
                if (it->tokens >= limits.admitBurst) {
                    it = sources.erase(it);
                    continue;
                }
            }
            ++it;
        }
    }

    // Whose place a newcomer from `source` takes, if the pool must make room.
    std::optional<quint64> victimFor(const Source &source) const
    {
        if (static_cast<int>(source.places.size()) >= limits.maxPerSource)
            return *source.places.begin();
        if (static_cast<int>(entries.size()) < limits.maxTotal)
            return std::nullopt;
        const Source *largest = nullptr;
        for (const Source &candidate : sources) {
            if (candidate.places.empty())
                continue;
            if (!largest || candidate.places.size() > largest->places.size()
                || (candidate.places.size() == largest->places.size()
                    && *candidate.places.begin() < *largest->places.begin()))
                largest = &candidate;
        }
        if (!largest)
            return std::nullopt;
        return *largest->places.begin();
    }
};

PreAuthPool::Place::Place(Place &&other) noexcept
    : m_pool(std::move(other.m_pool))
    , m_id(std::exchange(other.m_id, 0))
{ }

PreAuthPool::Place &PreAuthPool::Place::operator=(Place &&other) noexcept
{
    if (this != &other) {
        release();
        m_pool = std::move(other.m_pool);
        m_id = std::exchange(other.m_id, 0);
    }
    return *this;
}

void PreAuthPool::Place::release()
{
    if (m_id == 0)
        return;
    if (auto pool = m_pool.lock())
        pool->release(m_id);
    m_id = 0;
    m_pool.reset();
}

PreAuthPool::PreAuthPool(Limits limits)
    : m_state(std::make_shared<PoolState>())
{
    limits.maxTotal = std::max(1, limits.maxTotal);
    limits.maxPerSource = std::clamp(limits.maxPerSource, 1, limits.maxTotal);
    limits.admitBurst = std::max(1, limits.admitBurst);
    m_state->limits = limits;
}

PreAuthPool::PreAuthPool()
    : PreAuthPool(Limits {})
{ }

PreAuthPool::~PreAuthPool() = default;

std::optional<PreAuthPool::Place> PreAuthPool::enter(
    const QHostAddress &source, qint64 nowMs, Evict evict)
{
    PoolState &state = *m_state;
    const QByteArray key = sourceKeyOf(source);
    if (state.sources.size() > 4 * static_cast<qsizetype>(state.limits.maxTotal)
        && !state.sources.contains(key))
        state.prune(nowMs);

    auto it = state.sources.find(key);
    if (it == state.sources.end()) {
        it = state.sources.insert(key, PoolState::Source {});
        it->tokens = state.limits.admitBurst;
        it->refilledAtMs = nowMs;
    }
    state.refill(*it, nowMs);
    if (it->tokens < 1.0) {
        ++state.refused;
        return std::nullopt;
    }
    it->tokens -= 1.0;

    if (const std::optional<quint64> victim = state.victimFor(*it)) {
        Evict victimEvict = std::move(state.entries.at(*victim).evict);
        state.release(*victim);
        ++state.evicted;
        // Out of the books first: the connection may end synchronously.
        if (victimEvict)
            victimEvict();
        it = state.sources.find(key);
    }

    const quint64 id = state.nextId++;
    state.entries.emplace(id, PoolState::Entry { key, std::move(evict) });
    it->places.insert(id);
    return Place(m_state, id);
}

const PreAuthPool::Limits &PreAuthPool::limits() const
{
    return m_state->limits;
}

int PreAuthPool::size() const
{
    return static_cast<int>(m_state->entries.size());
}

int PreAuthPool::sizeOf(const QHostAddress &source) const
{
    const auto it = m_state->sources.constFind(sourceKeyOf(source));
    return it == m_state->sources.cend() ? 0 : static_cast<int>(it->places.size());
}

quint64 PreAuthPool::evictedCount() const
{
    return m_state->evicted;
}

quint64 PreAuthPool::refusedCount() const
{
    return m_state->refused;
}

} // namespace cloop::hub::edge
