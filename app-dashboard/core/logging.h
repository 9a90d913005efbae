#pragma once

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcDashboardApi)
Q_DECLARE_LOGGING_CATEGORY(lcDashboardEvents)
Q_DECLARE_LOGGING_CATEGORY(lcDashboardUi)
