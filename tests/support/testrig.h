#pragma once

// Everything one integration test function starts: its own hub, the
// forwarders it runs, and a scratch folder for homes, bundles and
// credential files. Destroying the rig ends every process it started.

#include "support/forwarderprocess.h"
#include "support/hubprocess.h"

#include <QTemporaryDir>

#include <memory>
#include <vector>

namespace cloop::testing {

// A forwarder enrolled through the CLI and connected with its bundle.
struct ConnectedForwarder
{
    Enrollment enrollment;
    QString credentialFile;
    ForwarderProcess *process = nullptr; // owned by the rig
};

class TestRig
{
public:
    TestRig();
    ~TestRig();
    TestRig(const TestRig &) = delete;
    TestRig &operator=(const TestRig &) = delete;

    HubProcess &hub() { return *m_hub; }
    // tls-init + serve; false with lastError() describing why.
    bool startHub();

    // A new, empty folder to serve as a daemon's HOME.
    QString newHome();
    // A path in the scratch folder (the file is not created).
    QString path(const QString &name) const;

    ForwarderProcess &addForwarder(const QStringList &arguments, const QString &home = {},
        ForwarderProcess::Program program = ForwarderProcess::Program::Standalone);
    // Starts a forwarder and waits until the hub lists forwarder `id` as
    // connected and the daemon says it is (false if it exits first).
    bool startAndAwaitConnection(ForwarderProcess &forwarder, qint64 id);
    // Enrolls `name`, runs `cloop-forward --bundle B --credential-file F`
    // and waits until the hub lists it connected.
    bool enrollAndConnect(const QString &name, ConnectedForwarder &out);
    // One run of cloop-forward to its end (usage errors, refusals).
    CliResult runForwarder(const QStringList &arguments, const QString &home);

    QString lastError() const { return m_lastError; }
    // Prints the hub's log, the CLI transcript and every forwarder's output.
    void printDiagnostics() const;
    // Qt's complaints of a cross-thread use in the hub's log or any
    // daemon's output (see crossThreadComplaints()).
    QStringList crossThreadComplaints() const;

private:
    QTemporaryDir m_scratch;
    std::unique_ptr<HubProcess> m_hub;
    std::vector<std::unique_ptr<ForwarderProcess>> m_forwarders;
    int m_homes = 0;
    QString m_lastError;
};

} // namespace cloop::testing
