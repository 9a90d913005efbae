#include "cli/forwardadmincommands.h"

#include "common/api/devicetest.h"
#include "common/api/enrollment.h"
#include "common/device/usb/usbiddatabase.h"
#include "common/protocol/devicespec.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/daemonadmin.h"
#include "cli/output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QRegularExpression>

namespace cloop::cli {

namespace {

QString forwarderMachine()
{
    return QStringLiteral("On the machine wired to the device");
}

int enroll(const QStringList &arguments)
{
    Command command(QStringLiteral("forward enroll"),
        QStringLiteral("Enroll a forwarder for one USB device or one network segment and "
                       "print the one-time command to run on its machine."));
    const QCommandLineOption nameOption(
        QStringLiteral("name"), QStringLiteral("The forwarder's name."), QStringLiteral("NAME"));
    const QCommandLineOption usb(QStringLiteral("usb"), QStringLiteral("Carry this USB device."),
        QStringLiteral("VID:PID[:SERIAL]"));
    const QCommandLineOption iface(QStringLiteral("interface"),
        QStringLiteral("Carry this network segment."), QStringLiteral("IF"));
    const QCommandLineOption ttl(QStringLiteral("token-ttl"),
        QStringLiteral("How long the bundle can be redeemed (default 24h)."),
        QStringLiteral("DURATION"));
    command.addOptions({ nameOption, usb, iface, ttl });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (!command.isSet(nameOption))
        return command.usageError(QStringLiteral("--name is required"));
    if (command.isSet(usb) == command.isSet(iface))
        return command.usageError(
            QStringLiteral("give exactly one of --usb VID:PID[:SERIAL] or --interface IF"));
    if (auto given = command.positionals(0,
            QStringLiteral("cloop forward enroll --name N (--usb VID:PID[:SERIAL] | "
                           "--interface IF) [--token-ttl 24h]"));
        !given)
        return command.usageError(given.error().message);
    // Checked by the hub's own rules before anything is sent.
    if (Status valid = checkDaemonName(command.value(nameOption), QLatin1StringView("forwarder"));
        !valid)
        return command.usageError(valid.error().message);
    if (auto device = command.isSet(usb)
            ? protocol::DeviceSpec::parseUsb(command.value(usb))
            : protocol::DeviceSpec::parseInterface(command.value(iface));
        !device)
        return command.usageError(QStringLiteral("%1: %2").arg(
            command.isSet(usb) ? QStringLiteral("--usb") : QStringLiteral("--interface"),
            device.error().message));
    if (command.isSet(ttl))
        if (Status valid = checkDuration(command.value(ttl), QStringLiteral("--token-ttl")); !valid)
            return command.usageError(valid.error().message);

    QJsonObject body { { QStringLiteral("name"), command.value(nameOption) } };
    if (command.isSet(usb))
        body.insert(QStringLiteral("usb"), command.value(usb));
    else
        body.insert(QStringLiteral("interface"), command.value(iface));
    if (command.isSet(ttl))
        body.insert(QStringLiteral("token_ttl"), command.value(ttl));

    auto answer = command.post(QStringLiteral("/api/forwarders"), body);
    if (!answer)
        return command.failed(answer.error());
    if (command.printedJson(*answer))
        return kExitOk;
    auto enrollment = api::ForwarderEnrollment::fromJson(*answer);
    if (!enrollment)
        return command.failed(enrollment.error());
    const api::Forwarder &forwarder = enrollment->daemon;
    printLine(QStringLiteral("Enrolled forwarder %1 \"%2\" for %3.")
                  .arg(forwarder.id)
                  .arg(forwarder.name, forwarder.deviceDescription));
    printEnrollmentCommand(
        enrollment->bundle, enrollment->tokenExpiresAt, forwarderMachine(), kForwarderNoun);
    return kExitOk;
}

int reenroll(const QStringList &arguments)
{
    return reenrollDaemon<api::Forwarder>(arguments, kForwarderNoun, forwarderMachine());
}

int list(const QStringList &arguments)
{
    Command command(QStringLiteral("forward list"), QStringLiteral("List the hub's forwarders."));
    const QCommandLineOption all(
        QStringLiteral("all"), QStringLiteral("Include revoked forwarders."));
    command.addOptions({ all });
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    if (auto given = command.positionals(0, QStringLiteral("cloop forward list [--json] [--all]"));
        !given)
        return command.usageError(given.error().message);
    auto listed = command.getList<api::Forwarder>(
        QStringLiteral("/api/forwarders"), QLatin1StringView("forwarders"));
    if (!listed)
        return command.failed(listed.error());
    QList<api::Forwarder> forwarders = std::move(*listed);
    if (!command.isSet(all))
        forwarders.removeIf(
            [](const api::Forwarder &forwarder) { return forwarder.revokedAt.isValid(); });
    if (command.printedJson(forwarders))
        return kExitOk;
    if (forwarders.isEmpty()) {
        printLine(
            QStringLiteral("No forwarders yet. Enroll one with: cloop forward enroll --name NAME "
                           "(--usb VID:PID | --interface IF)"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const api::Forwarder &forwarder : std::as_const(forwarders)) {
        QString device = forwarder.deviceDescription;
        // A connected USB forwarder says where its device is, or that it is gone.
        if (const auto &busId = forwarder.usbBusId)
            device += busId->isEmpty() ? QStringLiteral(" (unplugged)")
                                       : QStringLiteral(" at ") + *busId;
        rows.append({ QString::number(forwarder.id), forwarder.name, device,
            softwareCell(forwarder), stateCell(forwarder), formatLastSeen(forwarder) });
    }
    printLine(formatTable(
        { QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("DEVICE"),
            QStringLiteral("VERSION"), QStringLiteral("STATE"), QStringLiteral("LAST SEEN") },
        rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    return revokeDaemon(arguments, kForwarderNoun);
}

int upgrade(const QStringList &arguments)
{
    return upgradeDaemon(arguments, kForwarderNoun);
}

// The USB/IP device list a USB forwarder exports, one device a line.
void printUsbDevices(const api::DeviceTestReport &report)
{
    const auto &names = device::usb::UsbIdDatabase::system();
    for (const api::DeviceTestReport::UsbExport &device : report.devices) {
        const quint16 vendor = quint16(device.vendorId.toUInt(nullptr, 16));
        const quint16 product = quint16(device.productId.toUInt(nullptr, 16));
        const QString name
            = QStringList { names.vendorName(vendor), names.productName(vendor, product) }
                  .filter(QRegularExpression(QStringLiteral(".")))
                  .join(QStringLiteral(" · "));
        QStringList interfaces;
        for (const api::DeviceTestReport::UsbInterface &interface : device.interfaces)
            interfaces.append(
                QStringLiteral("%1/%2/%3")
                    .arg(interface.interfaceClass, interface.subclass, interface.protocol));
        printLine(QStringLiteral("  exports %1  %2:%3%4")
                      .arg(device.busId, device.vendorId, device.productId,
                          name.isEmpty() ? QString() : QStringLiteral("  ") + name));
        printLine(formatFields({
            { QStringLiteral("    speed"), device.speed },
            { QStringLiteral("    class"),
                QStringLiteral("%1, configuration %2, interfaces %3")
                    .arg(device.deviceClass)
                    .arg(device.configuration)
                    .arg(interfaces.isEmpty() ? QStringLiteral("none")
                                              : interfaces.join(QStringLiteral(", "))) },
            { QStringLiteral("    sysfs"), device.path },
        }));
    }
}

int test(const QStringList &arguments)
{
    Command command(QStringLiteral("forward test"),
        QStringLiteral(
            "Read what a forwarder's device shows (a segment's link, counters and a few frames; "
            "a USB device's USB/IP device list) without lending it to anything."));
    command.addPositional(QStringLiteral("ID"), QStringLiteral("The forwarder's id."));
    command.addJsonOption();
    if (auto done = command.parse(arguments))
        return *done;
    auto given = command.positionals(1, QStringLiteral("cloop forward test ID [--json]"));
    if (!given)
        return command.usageError(given.error().message);
    auto id = parseId(given->first(), QStringLiteral("forwarder id"));
    if (!id)
        return command.usageError(id.error().message);
    auto answer = command.post(QStringLiteral("/api/forwarders/%1/test").arg(*id), {});
    if (!answer)
        return command.failed(answer.error());
    auto tested = api::DeviceTest::fromJson(*answer);
    if (!tested)
        return command.failed(tested.error());
    const api::DeviceTestReport &report = tested->report;
    if (command.printedJson(*answer))
        return report.ok ? kExitOk : kExitFailed;
    const api::Forwarder &forwarder = tested->forwarder;
    printLine(QStringLiteral("Forwarder %1 \"%2\" (%3)")
                  .arg(forwarder.id)
                  .arg(forwarder.name, forwarder.deviceDescription));
    if (!report.ok) {
        printLine(QStringLiteral("  problem: %1").arg(report.problem));
        return kExitFailed;
    }
    if (report.isUsb()) {
        printUsbDevices(report);
        return kExitOk;
    }
    const api::DeviceTestReport::Link link = report.link.value_or(api::DeviceTestReport::Link {});
    const api::DeviceTestReport::Counters counters
        = report.counters.value_or(api::DeviceTestReport::Counters {});
    const auto traffic = [](qint64 frames, qint64 bytes, qint64 dropped) {
        return QStringLiteral("%1 frames, %2 bytes, %3 dropped")
            .arg(frames)
            .arg(bytes)
            .arg(dropped);
    };
    printLine(formatFields({
        { QStringLiteral("  link"),
            QStringLiteral("%1, %2, MTU %3, MAC %4")
                .arg(link.up ? QStringLiteral("up") : QStringLiteral("down"),
                    link.carrier ? QStringLiteral("carrier") : QStringLiteral("no carrier"))
                .arg(link.mtu)
                .arg(link.mac) },
        { QStringLiteral("  received"),
            traffic(counters.rxPackets, counters.rxBytes, counters.rxDropped) },
        { QStringLiteral("  sent"),
            traffic(counters.txPackets, counters.txBytes, counters.txDropped) },
        { QStringLiteral("  seen"),
            QStringLiteral("%1 frames in %2 s")
                .arg(report.framesSeen)
                .arg(double(report.listenedMs.value_or(0)) / 1000.0) },
    }));
    for (const api::DeviceTestReport::Frame &frame : report.frames) {
        const QString vlan = frame.vlan ? QStringLiteral(" VLAN %1").arg(*frame.vlan) : QString();
        const QString summary = !frame.summary.isEmpty()
            ? frame.summary
            : QStringLiteral("ethertype %1").arg(frame.ethertype);
        printLine(QStringLiteral("    %1 → %2%3  %4 (%5 bytes)")
                      .arg(frame.source, frame.destination, vlan, summary)
                      .arg(frame.length));
    }
    return kExitOk;
}

constexpr util::Subcommand kSubcommands[] = {
    { "enroll", enroll,
        "--name N (--usb VID:PID[:SERIAL] | --interface IF) [--token-ttl 24h] [--json]",
        "Enroll a forwarder; print the one-time command for its machine.",
        "cloop forward enroll --name hsm-1 --usb 1d50:6089" },
    { "list", list, "[--all] [--json]", "List forwarders (--all: revoked ones too).",
        "cloop forward list" },
    { "test", test, "ID [--json]", "Read what a forwarder's device shows, lending it to nothing.",
        "cloop forward test 3" },
    { "reenroll", reenroll, "ID [--token-ttl 24h] [--json]",
        "A new one-time command for a forwarder that never redeemed its bundle.",
        "cloop forward reenroll 3" },
    { "revoke", revoke, "ID [--reason TEXT]", "Revoke a forwarder: it never connects again.",
        "cloop forward revoke 3 --reason \"device moved to another lab\"" },
    { "upgrade", upgrade, "ID [--target T] [--json]",
        "Ask a forwarder's machine to upgrade itself.", "cloop forward upgrade 3" },
};

} // namespace

std::span<const util::Subcommand> forwardAdminCommands()
{
    return kSubcommands;
}

} // namespace cloop::cli
