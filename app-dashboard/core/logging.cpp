#include "app-dashboard/core/logging.h"

Q_LOGGING_CATEGORY(lcDashboardApi, "cloop.dashboard.api", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDashboardEvents, "cloop.dashboard.events", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDashboardUi, "cloop.dashboard.ui", QtInfoMsg)
