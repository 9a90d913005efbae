#include "daemon-agent/agentlogging.h"

Q_LOGGING_CATEGORY(lcAgent, "cloop.agent", QtInfoMsg)
Q_LOGGING_CATEGORY(lcAgentSandbox, "cloop.agent.sandbox", QtInfoMsg)
Q_LOGGING_CATEGORY(lcAgentProbe, "cloop.agent.probe", QtInfoMsg)
