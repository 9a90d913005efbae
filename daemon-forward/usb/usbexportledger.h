#pragma once

#include "common/device/sysfsroot.h"
#include "common/result.h"

#include <QSet>
#include <QString>
#include <QStringList>

namespace cloop::forward {

// The bus ids this forwarder has lent to usbip-host, kept in
// usb-exports.json beside its credential (replaced atomically on every
// change). A forwarder that dies mid-import leaves its device bound to
// usbip-host, where no local program can use it; the next start gives back
// what the previous process recorded, and nothing else: a device another
// USB/IP server exported is not this forwarder's to take.
class UsbExportLedger
{
public:
    static QString fileName() { return QStringLiteral("usb-exports.json"); }

    // Reads what a previous process left in `directory`.
    explicit UsbExportLedger(QString directory);

    QString filePath() const;
    Status record(const QString &busId);
    Status forget(const QString &busId);
    QStringList busIds() const;

    // For a restarted forwarder: each recorded device that is still bound
    // to usbip-host with no connection on it (usbip_status 1) goes back to
    // its own driver. One in use (2) is left and named. The records go.
    // Returns what was given back and, with why, what was not (for the log).
    struct Recovery
    {
        QStringList givenBack;
        QStringList leftAlone;
    };
    Recovery giveBackLeftovers(const device::SysfsRoot &roots);

private:
    Status write() const;

    QString m_directory;
    QSet<QString> m_busIds;
    QString m_readProblem;
};

} // namespace cloop::forward
