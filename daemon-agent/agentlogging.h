#pragma once

#include <QLoggingCategory>

// The agent's own categories, kept beside the agent so common/ stays shared
// by programs that never run a workload. Enable with
// QT_LOGGING_RULES="cloop.agent.sandbox.debug=true".
Q_DECLARE_LOGGING_CATEGORY(lcAgent)
Q_DECLARE_LOGGING_CATEGORY(lcAgentSandbox)
Q_DECLARE_LOGGING_CATEGORY(lcAgentProbe)
