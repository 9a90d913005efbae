// UsbIdDatabase: names by vendor and product from usb.ids text, damaged
// lines skipped, the class tables not mistaken for vendors.

#include "common/device/usb/usbiddatabase.h"

#include <QFile>
#include <QtTest>

using cloop::device::usb::UsbIdDatabase;

class TestUsbIdDatabase : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void vendorsAndProductsAreNamed();
    void damagedLinesCostOnlyTheirNames();
    void theClassTablesAreNotVendors();
    void latin1NamesStillRead();
    void theSystemDatabaseKnowsACommonDevice();
};

void TestUsbIdDatabase::vendorsAndProductsAreNamed()
{
    const UsbIdDatabase db = UsbIdDatabase::parse("# comment\n"
                                                  "\n"
                                                  "1050  Yubico.com\n"
                                                  "\t0407  Yubikey 4/5 OTP+U2F+CCID\n"
                                                  "\t\t00  an interface, not a product\n"
                                                  "1d6b  Linux Foundation\r\n"
                                                  "\t0002  2.0 root hub\r\n");
    QCOMPARE(db.vendorCount(), 2);
    QCOMPARE(db.productCount(), 2);
    QCOMPARE(db.vendorName(0x1050), QStringLiteral("Yubico.com"));
    QCOMPARE(db.productName(0x1050, 0x0407), QStringLiteral("Yubikey 4/5 OTP+U2F+CCID"));
    QCOMPARE(db.productName(0x1d6b, 0x0002), QStringLiteral("2.0 root hub"));
    // A product id under another vendor is another product.
    QCOMPARE(db.productName(0x1d6b, 0x0407), QString());
    QCOMPARE(db.vendorName(0x0001), QString());
}

void TestUsbIdDatabase::damagedLinesCostOnlyTheirNames()
{
    const UsbIdDatabase db = UsbIdDatabase::parse("zz12  not hex\n"
                                                  "\t0001  orphan product of a broken vendor\n"
                                                  "12  too short\n"
                                                  "abcd\n"
                                                  "0bda  Realtek\n"
                                                  "\tgg00  broken product\n"
                                                  "\t8153  RTL8153 Gigabit Ethernet Adapter\n"
                                                  "\t8154");
    QCOMPARE(db.vendorName(0x0bda), QStringLiteral("Realtek"));
    QCOMPARE(db.productName(0x0bda, 0x8153), QStringLiteral("RTL8153 Gigabit Ethernet Adapter"));
    QCOMPARE(db.productCount(), 1);
    QCOMPARE(db.vendorCount(), 1);
    QVERIFY(UsbIdDatabase::parse(QByteArrayView()).isEmpty());
}

void TestUsbIdDatabase::theClassTablesAreNotVendors()
{
    const UsbIdDatabase db = UsbIdDatabase::parse("0bda  Realtek\n"
                                                  "C 03  Human Interface Device\n"
                                                  "\t01  Boot Interface Subclass\n"
                                                  "1234  after the classes\n");
    QCOMPARE(db.vendorCount(), 1);
    QCOMPARE(db.vendorName(0x1234), QString());
}

void TestUsbIdDatabase::latin1NamesStillRead()
{
    const UsbIdDatabase db = UsbIdDatabase::parse("0001  Fry\xe9s\n\t0002  caf\xc3\xa9\n");
    QCOMPARE(db.vendorName(0x0001), QStringLiteral(u"Fryés"));
    QCOMPARE(db.productName(0x0001, 0x0002), QStringLiteral(u"café"));
}

void TestUsbIdDatabase::theSystemDatabaseKnowsACommonDevice()
{
    if (!QFile::exists(QStringLiteral("/usr/share/misc/usb.ids")))
        QSKIP("usb.ids is not installed (scripts/install-deps installs it)");
    const UsbIdDatabase &db = UsbIdDatabase::system();
    QVERIFY(db.vendorCount() > 1000);
    QCOMPARE(db.vendorName(0x1d6b), QStringLiteral("Linux Foundation"));
    QVERIFY(!db.productName(0x1050, 0x0407).isEmpty());
    // Read once: the same object every time.
    QCOMPARE(&UsbIdDatabase::system(), &db);
}

QTEST_GUILESS_MAIN(TestUsbIdDatabase)
#include "tst_usbiddatabase.moc"
