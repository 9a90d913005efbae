#pragma once

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QString>

#include <chrono>

namespace cloop::util {

// Lines that someone without credentials can cause are throttled: at most
// `burst` per window, then a single line saying how many were left out.
// Usage: if (throttle.admit()) qCWarning(...) << ...;
class LogThrottle final
{
public:
    LogThrottle(const QLoggingCategory &category, QString what, int burst = 20,
        std::chrono::milliseconds window = std::chrono::seconds(10));

    bool admit();
    quint64 suppressedCount() const { return m_suppressedTotal; }

private:
    const QLoggingCategory &m_category;
    QString m_what;
    int m_burst;
    std::chrono::milliseconds m_window;
    QElapsedTimer m_windowStart;
    int m_inWindow = 0;
    quint64 m_suppressedInWindow = 0;
    quint64 m_suppressedTotal = 0;
};

} // namespace cloop::util
