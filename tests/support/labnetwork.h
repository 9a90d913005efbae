#pragma once

// The network a root test of layer-2 forwarding runs in. The test process
// first moves into a network namespace of its own, so everything it starts
// (hub, forwarder, agent) shares a loopback and interfaces nobody else
// sees; then a "lab" namespace, standing in for the on-prem segment, is
// joined to it by a veth pair. Destroying the lab removes its namespace
// and, with it, the pair.

#include "support/processutil.h"

#include <QString>
#include <QStringList>

namespace cloop::testing {

// Moves this process (its main thread, and every child it starts later)
// into a new network namespace with loopback up. Empty on success, else
// why not (not root). Call once, before starting anything.
QString enterPrivateNetwork();

class LabNetwork
{
public:
    // `localEnd` stays in the test's namespace without an address; `labEnd`
    // goes into the lab with `labAddress` (CIDR).
    LabNetwork(QString localEnd, QString labEnd, QString labAddress);
    ~LabNetwork();
    LabNetwork(const LabNetwork &) = delete;
    LabNetwork &operator=(const LabNetwork &) = delete;

    bool create();
    QString lastError() const { return m_lastError; }

    QString name() const { return m_name; }
    QString localEnd() const { return m_localEnd; }
    QString labEnd() const { return m_labEnd; }
    // A command run to its end inside the lab.
    CliResult inLab(const QStringList &command, int timeoutMs = kLongWaitMs) const;
    // `ip netns exec LAB …` for a QProcess the caller starts and ends.
    QStringList labCommand(const QStringList &command) const;

private:
    QString m_name;
    QString m_localEnd;
    QString m_labEnd;
    QString m_labAddress;
    bool m_created = false;
    QString m_lastError;
};

} // namespace cloop::testing
