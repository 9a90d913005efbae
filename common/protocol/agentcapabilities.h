#pragma once

#include "common/result.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::protocol {

// What an executor agent can do, as detected on its machine (CapabilityProbe)
// and sent to the hub in its hello. The hub parses what an agent sends with
// fromJson(), which bounds every size and checks every type: an agent is
// not trusted to be well-formed. Unknown keys are ignored, so a newer agent
// may report more; a section an older agent leaves out reads as "no" with
// the reason "not reported".
struct AgentCapabilities
{
    // Host mode runs workloads as plain processes (explicitly chosen by the
    // agent's operator, never a fallback); container mode runs each in a
    // sandbox of the container engine.
    enum class Mode
    {
        Host,
        Container
    };
    // The OCI runtimes that matter for dispatch: runc and crun are
    // namespace-based and can receive a device; gVisor and Kata cannot.
    enum class RuntimeKind
    {
        Runc,
        Crun,
        Gvisor,
        Kata
    };

    // A yes/no answer. Every "no" carries a reason a person can act on; a
    // "yes" may carry a caveat.
    struct Verdict
    {
        bool yes = false;
        QString reason;

        friend bool operator==(const Verdict &, const Verdict &) = default;
    };

    struct OciRuntime
    {
        QString name; // as registered with the engine: "runc", "runsc", "kata"
        QString path;
        RuntimeKind kind = RuntimeKind::Runc;

        friend bool operator==(const OciRuntime &, const OciRuntime &) = default;
    };

    struct ContainerEngine
    {
        bool present = false;
        QString name; // "podman"
        QString version;
        QString defaultRuntime;
        QList<OciRuntime> runtimes;
        QString reason; // why it is absent

        friend bool operator==(const ContainerEngine &, const ContainerEngine &) = default;
    };

    struct PacketFilter
    {
        bool usable = false;
        QString name; // "nft"
        QString version;
        QString reason;

        friend bool operator==(const PacketFilter &, const PacketFilter &) = default;
    };

    struct UsbDevice
    {
        QString busId; // "1-1.2"
        quint16 vendorId = 0;
        quint16 productId = 0;
        QString serial;
        QString product;
        QString speed; // sysfs text, Mbit/s: "1.5", "12", "480", "5000", ...

        friend bool operator==(const UsbDevice &, const UsbDevice &) = default;
    };

    // Bounds that fromJson() enforces and CapabilityProbe keeps to.
    static constexpr qsizetype kMaxSerializedBytes = 32 * 1024;
    static constexpr qsizetype kMaxLabels = 32;
    static constexpr qsizetype kMaxLabelKeyLength = 63;
    static constexpr qsizetype kMaxLabelValueLength = 128;
    static constexpr qsizetype kMaxRuntimes = 16;
    static constexpr qsizetype kMaxUsbDevices = 64;
    static constexpr qsizetype kMaxTextLength = 256; // names, versions, USB strings
    static constexpr qsizetype kMaxReasonLength = 512;
    static constexpr int kMaxCpus = 65536;
    static constexpr int kMaxConcurrentCeiling = 4096;

    QString softwareVersion;
    int protocolVersion = 0;
    QString os; // QSysInfo::kernelType(): "linux"
    QString arch; // QSysInfo::currentCpuArchitecture(): "x86_64", "arm64"
    QString kernel; // QSysInfo::kernelVersion()
    int cpus = 1;
    qint64 memoryBytes = 0;
    QMap<QString, QString> labels;
    int maxConcurrent = 1;
    Mode mode = Mode::Container;
    ContainerEngine engine;
    Verdict kvm;
    PacketFilter packetFilter;
    QList<UsbDevice> usbInventory;
    Verdict usbAttach;
    Verdict l2Attach;
    // The harness programs found on the agent's PATH (the command-line tools
    // runs are made to drive, such as coding agents): name -> full path.
    QMap<QString, QString> harnesses;
    static constexpr qsizetype kMaxHarnesses = 32;
    // The harnesses the device's installer table can install on request.
    QStringList harnessInstallers;
    // A harness's name: what it is called on PATH ("claude", "codex").
    static bool isHarnessName(const QString &name);

    QJsonObject toJson() const;
    static Result<AgentCapabilities> fromJson(const QJsonObject &object);
    // The same from the bytes of a JSON object, refusing more than
    // kMaxSerializedBytes before parsing.
    static Result<AgentCapabilities> fromJson(QByteArrayView utf8);

    // One line for `cloop executor list`, e.g.
    // "linux/x86_64 2 cpus 23 GiB, podman 4.3.1 (runc, crun), usb: no
    // (vhci_hcd missing), l2: yes, kvm: yes, max 2". Control characters an
    // agent may have sent are shown as spaces.
    QString summary() const;

    // Checks one --label: key 1..63 of [A-Za-z0-9._/-] starting with a
    // letter or digit; value up to 128 printable characters.
    static Status validateLabel(const QString &key, const QString &value);
    // The concurrency ceiling an operator gave (`option` names it in the
    // error): 0 (the number of CPUs) to kMaxConcurrentCeiling.
    static Result<int> parseMaxConcurrent(const QString &text, const QString &option);

    static QString modeName(Mode mode); // "host", "container"
    static QString runtimeKindName(RuntimeKind kind); // "runc", "crun", "gvisor", "kata"
    // The kind of a runtime by its registered name or executable
    // ("runsc" -> gVisor, "kata-qemu" -> Kata); nullopt for others.
    static std::optional<RuntimeKind> runtimeKindOf(const QString &nameOrPath);

    friend bool operator==(const AgentCapabilities &, const AgentCapabilities &) = default;
};

} // namespace cloop::protocol
