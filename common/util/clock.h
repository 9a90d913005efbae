#pragma once

#include <QDateTime>

namespace cloop {

// Where a program reads the time of day (expiry, timestamps it records), so
// that expiry can be tested on a clock a test moves instead of by waiting.
class Clock
{
public:
    virtual ~Clock() = default;
    virtual QDateTime now() const { return QDateTime::currentDateTimeUtc(); }

    // The wall clock, for the mains and for code given no clock of its own.
    static const Clock &system()
    {
        static const Clock wall;
        return wall;
    }
};

// A clock that only moves when told to.
class ManualClock final : public Clock
{
public:
    explicit ManualClock(QDateTime start = QDateTime::currentDateTimeUtc())
        : m_now(std::move(start))
    { }
    QDateTime now() const override { return m_now; }
    void advance(qint64 seconds) { m_now = m_now.addSecs(seconds); }

private:
    QDateTime m_now;
};

} // namespace cloop
