#pragma once

#include <QDateTime>

namespace cloop::hub {

// Where the hub's domain logic reads the time, so that expiry can be tested
// without waiting for it.
class Clock
{
public:
    virtual ~Clock() = default;
    virtual QDateTime now() const { return QDateTime::currentDateTimeUtc(); }
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

} // namespace cloop::hub
