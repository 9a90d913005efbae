#include "common/util/logthrottle.h"

namespace cloop::util {

LogThrottle::LogThrottle(
    const QLoggingCategory &category, QString what, int burst, std::chrono::milliseconds window)
    : m_category(category)
    , m_what(std::move(what))
    , m_burst(burst)
    , m_window(window)
{
    m_windowStart.start();
}

bool LogThrottle::admit()
{
    if (m_windowStart.elapsed() >= m_window.count()) {
        if (m_suppressedInWindow > 0 && m_category.isWarningEnabled()) {
            QMessageLogger(nullptr, 0, nullptr, m_category.categoryName()).warning().noquote()
                << QStringLiteral("%1 more %2 in the last %3 s were not logged")
                       .arg(m_suppressedInWindow)
                       .arg(m_what)
                       .arg(m_window.count() / 1000);
        }
        m_windowStart.restart();
        m_inWindow = 0;
        m_suppressedInWindow = 0;
    }
    if (m_inWindow < m_burst) {
        ++m_inWindow;
        return true;
    }
    ++m_suppressedInWindow;
    ++m_suppressedTotal;
    return false;
}

} // namespace cloop::util
