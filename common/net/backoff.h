#pragma once

#include <chrono>
#include <functional>
#include <optional>

namespace cloop::net {

// Capped exponential backoff with "equal jitter": the n-th delay is drawn
// from [d/2, d] where d = min(cap, initial * 2^n), so many daemons cut off by
// one hub restart do not return in lockstep, and none waits longer than cap.
class Backoff
{
public:
    using Milliseconds = std::chrono::milliseconds;
    // Returns a number in [0, 1); tests inject a fixed sequence.
    using RandomSource = std::function<double()>;

    Backoff(Milliseconds initial = Milliseconds(500), Milliseconds cap = Milliseconds(30'000),
        RandomSource random = {});

    Milliseconds next();
    // The next delay only is drawn from [0, window] (at most the cap): a
    // hub that stops tells its daemons how long their return should take,
    // so that all of them do not come back in the first half second.
    // Then the delays go on from where they were.
    void spreadNextOver(Milliseconds window);
    void reset()
    {
        m_attempt = 0;
        m_spread.reset();
    }
    int attempts() const { return m_attempt; }
    Milliseconds initial() const { return m_initial; }
    Milliseconds cap() const { return m_cap; }

private:
    Milliseconds m_initial;
    Milliseconds m_cap;
    RandomSource m_random;
    int m_attempt = 0;
    std::optional<Milliseconds> m_spread;
};

} // namespace cloop::net
