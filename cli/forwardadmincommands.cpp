#include "cli/forwardadmincommands.h"
#include "common/device/usb/usbiddatabase.h"

#include "cli/argumentchecks.h"
#include "cli/command.h"
#include "cli/daemonadmin.h"
#include "cli/output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QRegularExpression>

namespace cloop::cli {

namespace {

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
    const QJsonObject forwarder = answer->value(QLatin1String("forwarder")).toObject();
    printLine(QStringLiteral("Enrolled forwarder %1 \"%2\" for %3.")
                  .arg(forwarder.value(QLatin1String("id")).toInteger())
                  .arg(forwarder.value(QLatin1String("name")).toString(),
                      forwarder.value(QLatin1String("device_description")).toString()));
    printEnrollmentCommand(
        *answer, QStringLiteral("On the machine wired to the device"), kForwarderNoun);
    return kExitOk;
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
    auto answer = command.get(QStringLiteral("/api/forwarders"));
    if (!answer)
        return command.failed(answer.error());
    QJsonArray forwarders;
    for (const QJsonValue &value : answer->value(QLatin1String("forwarders")).toArray()) {
        const QJsonObject forwarder = value.toObject();
        if (command.isSet(all) || forwarder.value(QLatin1String("revoked_at")).isNull())
            forwarders.append(forwarder);
    }
    if (command.printedJson(forwarders))
        return kExitOk;
    if (forwarders.isEmpty()) {
        printLine(
            QStringLiteral("No forwarders yet. Enroll one with: cloop forward enroll --name NAME "
                           "(--usb VID:PID | --interface IF)"));
        return kExitOk;
    }
    QList<QStringList> rows;
    for (const QJsonValue &value : std::as_const(forwarders)) {
        const QJsonObject forwarder = value.toObject();
        QString device = forwarder.value(QLatin1String("device_description")).toString();
        // A connected USB forwarder says where its device is, or that it is gone.
        if (const QJsonValue busId = forwarder.value(QLatin1String("usb_busid")); busId.isString())
            device += busId.toString().isEmpty() ? QStringLiteral(" (unplugged)")
                                                 : QStringLiteral(" at ") + busId.toString();
        rows.append({ QString::number(forwarder.value(QLatin1String("id")).toInteger()),
            forwarder.value(QLatin1String("name")).toString(), device,
            forwarder.value(QLatin1String("state")).toString(), formatLastSeen(forwarder) });
    }
    printLine(formatTable({ QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("DEVICE"),
                              QStringLiteral("STATE"), QStringLiteral("LAST SEEN") },
        rows));
    return kExitOk;
}

int revoke(const QStringList &arguments)
{
    return revokeDaemon(arguments, kForwarderNoun);
}

// The USB/IP device list a USB forwarder exports, one device a line.
void printUsbDevices(const QJsonObject &report)
{
    const auto &names = device::usb::UsbIdDatabase::system();
    for (const QJsonValue &value : report.value(QLatin1String("devices")).toArray()) {
        const QJsonObject device = value.toObject();
        const quint16 vendor = quint16(field(device, "vendor_id").toUInt(nullptr, 16));
        const quint16 product = quint16(field(device, "product_id").toUInt(nullptr, 16));
        const QString name
            = QStringList { names.vendorName(vendor), names.productName(vendor, product) }
                  .filter(QRegularExpression(QStringLiteral(".")))
                  .join(QStringLiteral(" · "));
        QStringList interfaces;
        for (const QJsonValue &each : device.value(QLatin1String("interfaces")).toArray()) {
            const QJsonObject interface = each.toObject();
            interfaces.append(QStringLiteral("%1/%2/%3")
                                  .arg(field(interface, "class"), field(interface, "subclass"),
                                      field(interface, "protocol")));
        }
        printLine(QStringLiteral("  exports %1  %2:%3%4")
                      .arg(field(device, "busid"), field(device, "vendor_id"),
                          field(device, "product_id"),
                          name.isEmpty() ? QString() : QStringLiteral("  ") + name));
        printLine(formatFields({
            { QStringLiteral("    speed"), field(device, "speed") },
            { QStringLiteral("    class"),
                QStringLiteral("%1, configuration %2, interfaces %3")
                    .arg(field(device, "class"))
                    .arg(device.value(QLatin1String("configuration")).toInt())
                    .arg(interfaces.isEmpty() ? QStringLiteral("none")
                                              : interfaces.join(QStringLiteral(", "))) },
            { QStringLiteral("    sysfs"), field(device, "path") },
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
    const QJsonObject report = answer->value(QLatin1String("report")).toObject();
    const bool ok = report.value(QLatin1String("ok")).toBool();
    if (command.printedJson(*answer))
        return ok ? kExitOk : kExitFailed;
    const QJsonObject forwarder = answer->value(QLatin1String("forwarder")).toObject();
    printLine(QStringLiteral("Forwarder %1 \"%2\" (%3)")
                  .arg(forwarder.value(QLatin1String("id")).toInteger())
                  .arg(field(forwarder, "name"), field(forwarder, "device_description")));
    if (!ok) {
        printLine(QStringLiteral("  problem: %1").arg(field(report, "problem")));
        return kExitFailed;
    }
    if (field(report, "kind") == QLatin1String("usb")) {
        printUsbDevices(report);
        return kExitOk;
    }
    const QJsonObject link = report.value(QLatin1String("link")).toObject();
    const QJsonObject counters = report.value(QLatin1String("counters")).toObject();
    const auto count
        = [&counters](const char *key) { return counters.value(QLatin1String(key)).toInteger(); };
    printLine(formatFields({
        { QStringLiteral("  link"),
            QStringLiteral("%1, %2, MTU %3, MAC %4")
                .arg(link.value(QLatin1String("up")).toBool() ? QStringLiteral("up")
                                                              : QStringLiteral("down"),
                    link.value(QLatin1String("carrier")).toBool() ? QStringLiteral("carrier")
                                                                  : QStringLiteral("no carrier"))
                .arg(link.value(QLatin1String("mtu")).toInt())
                .arg(field(link, "mac")) },
        { QStringLiteral("  received"),
            QStringLiteral("%1 frames, %2 bytes, %3 dropped")
                .arg(count("rx_packets"))
                .arg(count("rx_bytes"))
                .arg(count("rx_dropped")) },
        { QStringLiteral("  sent"),
            QStringLiteral("%1 frames, %2 bytes, %3 dropped")
                .arg(count("tx_packets"))
                .arg(count("tx_bytes"))
                .arg(count("tx_dropped")) },
        { QStringLiteral("  seen"),
            QStringLiteral("%1 frames in %2 s")
                .arg(report.value(QLatin1String("frames_seen")).toInt())
                .arg(report.value(QLatin1String("listened_ms")).toInt() / 1000.0) },
    }));
    for (const QJsonValue &value : report.value(QLatin1String("frames")).toArray()) {
        const QJsonObject frame = value.toObject();
        const QString vlan = frame.contains(QLatin1String("vlan"))
            ? QStringLiteral(" VLAN %1").arg(frame.value(QLatin1String("vlan")).toInt())
            : QString();
        const QString summary = frame.contains(QLatin1String("summary"))
            ? field(frame, "summary")
            : QStringLiteral("ethertype %1").arg(field(frame, "ethertype"));
        printLine(QStringLiteral("    %1 → %2%3  %4 (%5 bytes)")
                      .arg(field(frame, "source"), field(frame, "destination"), vlan, summary)
                      .arg(frame.value(QLatin1String("length")).toInt()));
    }
    return kExitOk;
}

constexpr Subcommand kSubcommands[]
    = { { "enroll", enroll }, { "list", list }, { "revoke", revoke }, { "test", test } };

} // namespace

bool isForwardAdminCommand(const QString &subcommand)
{
    return hasSubcommand(kSubcommands, subcommand);
}

int runForwardAdminCommand(const QStringList &arguments)
{
    return runSubcommand(arguments, kSubcommands);
}

} // namespace cloop::cli
