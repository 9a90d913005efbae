#pragma once

#include <QByteArray>
#include <QHostAddress>

#include <functional>
#include <memory>
#include <optional>

namespace cloop::hub::edge {

struct PoolState;

// The key unauthenticated connections are counted under: an IPv4 address,
// or an IPv6 /64 (one subscriber's network; counting single v6 addresses
// would let one host take as many places as it likes).
QByteArray sourceKeyOf(const QHostAddress &address);

// The places of connections that have not proved who they are yet: TLS
// handshakes, requests without a valid token, WebSockets awaiting their
// hello. An attacker holding no credential can take only a bounded share:
// each source has a cap of its own and a rate of new connections, and when
// the pool is full a newcomer takes the place of the oldest connection of
// the source holding the most, so a daemon with a valid hello always gets
// its turn.
class PreAuthPool final
{
public:
    struct Limits
    {
        int maxTotal = 1024;
        int maxPerSource = 128;
        // New connections a source may open at once, and refilled per second.
        int admitBurst = 512;
        double admitPerSecond = 128;
    };

    // Called when the pool takes a place back; must end the connection.
    using Evict = std::function<void()>;

    // A place in the pool, given back when destroyed (the connection ended
    // or proved itself). May outlive the pool.
    class Place final
    {
    public:
        Place() = default;
        Place(Place &&other) noexcept;
        Place &operator=(Place &&other) noexcept;
        Place(const Place &) = delete;
        Place &operator=(const Place &) = delete;
        ~Place() { release(); }

        bool isHeld() const { return m_id != 0; }
        void release();

    private:
        friend class PreAuthPool;
        Place(std::weak_ptr<PoolState> pool, quint64 id)
            : m_pool(std::move(pool))
            , m_id(id)
        { }

        std::weak_ptr<PoolState> m_pool;
        quint64 m_id = 0;
    };

    PreAuthPool();
    explicit PreAuthPool(Limits limits);
    ~PreAuthPool();
    PreAuthPool(const PreAuthPool &) = delete;
    PreAuthPool &operator=(const PreAuthPool &) = delete;

    // A place for a new connection from `source` at monotonic time `nowMs`,
    // or nothing when the source has spent its rate of new connections.
    // May call the Evict of an older connection before it returns.
    std::optional<Place> enter(const QHostAddress &source, qint64 nowMs, Evict evict);

    const Limits &limits() const;
    int size() const;
    int sizeOf(const QHostAddress &source) const;
    quint64 evictedCount() const;
    quint64 refusedCount() const;

private:
    std::shared_ptr<PoolState> m_state;
};

} // namespace cloop::hub::edge
