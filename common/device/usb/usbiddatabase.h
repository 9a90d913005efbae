#pragma once

#include "common/result.h"

#include <QByteArrayView>
#include <QHash>
#include <QString>

namespace cloop::device::usb {

// Vendor and product names from the USB ID database (usb.ids, as Debian's
// usb.ids package installs it), for showing "1050:0407" as
// "Yubico.com · Yubikey 4/5 OTP+U2F+CCID". Only the vendor and device
// sections are read; interfaces and the class tables after them are not.
class UsbIdDatabase
{
public:
    // Lines that do not fit the format are skipped: a damaged file costs
    // names, never the program.
    static UsbIdDatabase parse(QByteArrayView text);
    static Result<UsbIdDatabase> load(const QString &path);
    // The system's database, read once on first use; empty when there is none.
    static const UsbIdDatabase &system();

    bool isEmpty() const { return m_vendors.isEmpty(); }
    qsizetype vendorCount() const { return m_vendors.size(); }
    qsizetype productCount() const { return m_products.size(); }
    // Empty when unknown.
    QString vendorName(quint16 vendor) const { return m_vendors.value(vendor); }
    QString productName(quint16 vendor, quint16 product) const
    {
        return m_products.value((quint32(vendor) << 16) | product);
    }

private:
    QHash<quint16, QString> m_vendors;
    QHash<quint32, QString> m_products;
};

} // namespace cloop::device::usb
