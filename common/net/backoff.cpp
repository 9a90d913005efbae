#include "common/net/backoff.h"

#include <QRandomGenerator>

#include <algorithm>
#include <utility>

namespace cloop::net {

Backoff::Backoff(Milliseconds initial, Milliseconds cap, RandomSource random)
    : m_initial(std::max(initial, Milliseconds(1)))
    , m_cap(std::max(cap, m_initial))
    , m_random(
          random ? std::move(random) : [] { return QRandomGenerator::global()->generateDouble(); })
{ }

void Backoff::spreadNextOver(Milliseconds window)
{
    m_spread = std::clamp(window, Milliseconds(0), m_cap);
}

Backoff::Milliseconds Backoff::next()
{
    if (const std::optional<Milliseconds> spread = std::exchange(m_spread, std::nullopt)) {
        const double r = std::clamp(m_random(), 0.0, 1.0);
        return Milliseconds(
            std::max<qint64>(1, static_cast<qint64>(r * static_cast<double>(spread->count()))));
    }
    // Doubling stops once the cap is reached, so the shift never overflows.
    qint64 ceiling = m_initial.count();
    for (int i = 0; i < m_attempt && ceiling < m_cap.count(); ++i)
        ceiling *= 2;
    ceiling = std::min<qint64>(ceiling, m_cap.count());
    ++m_attempt;
    const double r = std::clamp(m_random(), 0.0, 1.0);
    const auto half = ceiling / 2;
    return Milliseconds(
        std::max<qint64>(1, half + static_cast<qint64>(r * static_cast<double>(ceiling - half))));
}

} // namespace cloop::net
