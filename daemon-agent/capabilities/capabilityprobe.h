#pragma once

#include "common/device/sysfsroot.h"
#include "common/protocol/agentcapabilities.h"

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <memory>

namespace cloop::util {
class CommandRunner;
}

namespace cloop::agent {

// The shared value types, by the names the agent's code uses.
using device::SysfsRoot;
using protocol::AgentCapabilities;
using util::CommandRunner;

// Detects what this machine offers an executor agent (AgentCapabilities).
// Everything it looks at can be replaced for tests: the kernel's file
// systems (SysfsRoot), the host's tools (CommandRunner: `podman info`,
// `nft`), the containers.conf files and the effective uid. probe() runs
// a few short commands (each bounded by kCommandTimeout, the engine's own
// first answer by kEngineTimeout) and blocks until
// they are done: call it at start-up or from a worker thread.
class CapabilityProbe final
{
public:
    using EffectiveUid = std::function<unsigned int()>;

    static constexpr std::chrono::milliseconds kCommandTimeout { 10'000 };
    // `podman info` sets up the engine's storage the first time it runs,
    // which on a slow or busy machine (a board, a machine still booting)
    // takes far longer than answering afterwards.
    static constexpr std::chrono::milliseconds kEngineTimeout { 90'000 };

    // What the operator chose rather than what is detected.
    struct Options
    {
        QMap<QString, QString> labels;
        int maxConcurrent = 0; // 0: the number of CPUs
        AgentCapabilities::Mode mode = AgentCapabilities::Mode::Container;
        // The harness programs to look for on PATH (the installer table's).
        QStringList harnessNames;
    };

    // The kernel the program's main chose (this machine's, or a test
    // program's stand-in), ProcessCommandRunner, the containers.conf files
    // podman reads, geteuid().
    explicit CapabilityProbe(SysfsRoot roots);
    // `runner` must not be null. An empty containersConfFiles reads none.
    CapabilityProbe(SysfsRoot roots, std::unique_ptr<CommandRunner> runner, EffectiveUid euid,
        QStringList containersConfFiles);
    ~CapabilityProbe();
    Q_DISABLE_COPY_MOVE(CapabilityProbe)

    AgentCapabilities probe(const Options &options) const;

    // The parts of probe(), each usable alone.
    qint64 memoryBytes() const;
    QMap<QString, QString> findHarnesses(const QStringList &names) const;
    AgentCapabilities::ContainerEngine detectEngine() const;
    AgentCapabilities::Verdict detectKvm() const;
    AgentCapabilities::PacketFilter detectPacketFilter() const;
    QList<AgentCapabilities::UsbDevice> readUsbInventory() const;
    AgentCapabilities::Verdict detectUsbAttach() const;
    AgentCapabilities::Verdict detectL2Attach(
        AgentCapabilities::Mode mode, const AgentCapabilities::ContainerEngine &engine) const;

    // The engine from the JSON of `podman info --format json` (podman 4.x):
    // version.Version and host.ociRuntime; fields it lacks are left empty.
    // Error when the output is not a JSON object.
    static Result<AgentCapabilities::ContainerEngine> parsePodmanInfo(const QByteArray &json);

private:
    bool isRoot() const;
    QList<AgentCapabilities::OciRuntime> registeredRuntimes(
        const QString &defaultName, const QString &defaultPath) const;

    SysfsRoot m_roots;
    std::unique_ptr<CommandRunner> m_runner;
    EffectiveUid m_euid;
    QStringList m_containersConfFiles;
};

} // namespace cloop::agent
