#pragma once

#include "common/api/binding.h"
#include "common/api/forwarder.h"
#include "common/api/forwardertraffic.h"
#include "common/device/usb/usbiddatabase.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>

namespace cloop::dashboard {

// What a card shows of a finished Test: pass or fail, when, one line that
// fits the card, and the whole report for who wants to read it.
struct TestOutcome
{
    bool passed = false;
    QDateTime finishedAt;
    QString summary; // one line
    QString details; // every line of the report; the summary when there is no more

    friend bool operator==(const TestOutcome &, const TestOutcome &) = default;
};

// What a forwarder's device streams carried over the last minutes, a number
// of bytes each way for each equal step, oldest first.
struct TrafficHistory
{
    qint64 stepSeconds = 0;
    QDateTime until; // when the newest step ended
    QList<qint64> toRun; // bytes from the device to the run
    QList<qint64> fromRun; // bytes from the run to the device
    // A segment's frames and drops, or a USB device's URBs, as its
    // forwarder counts them; empty when it does not (an older forwarder).
    bool urbs = false;
    QList<qint64> framesToRun;
    QList<qint64> framesFromRun;
    QList<qint64> droppedToRun;
    QList<qint64> droppedFromRun;

    bool isEmpty() const { return toRun.isEmpty(); }
    friend bool operator==(const TrafficHistory &, const TrafficHistory &) = default;
};

// The hub's device forwarders, one row each, with the binding that holds the
// forwarder's device (a forwarder lends to one binding at a time) and the
// outcome of its last Test. Rows are keyed by forwarder id: a refresh or an
// event updates a row in place, so views keep selection and scroll.
class ForwarderListModel final : public QAbstractListModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderListModel)

public:
    enum Role
    {
        IdRole = Qt::UserRole + 1,
        NameRole,
        DeviceRole, // "usb 1050:0407:A1" or "l2 eth1", as the hub describes it
        DeviceNameRole, // "Yubico.com · Yubikey 4/5 OTP+U2F+CCID" from the USB ID database; empty
                        // when unknown
        KindRole, // "usb" or "l2"
        StateRole, // awaiting_enrollment, connected, disconnected, revoked
        ConnectedRole,
        HubMemberRole, // the hub holding its session, empty when offline
        DeviceUnpluggedRole, // a connected USB forwarder says its device is unplugged
        LastSeenRole, // QDateTime, invalid when never seen
        BindingIdRole, // 0 when nothing is bound
        BindingProjectRole,
        BindingExecutorRole,
        BindingTargetRole,
        BindingAddressRole,
        BindingExpiresRole, // QDateTime
        BindingCreatedByRole,
        TestSummaryRole, // the last Test's outcome in one line, empty when none
        TestDetailsRole, // the whole of it, several lines
        TestPassedRole, // bool; invalid when never tested
        TestFinishedAtRole, // QDateTime; invalid when never tested
        TestRunningRole,
        CreatedAtRole, // QDateTime
        RevokedAtRole, // QDateTime; invalid while not revoked
        TrafficRole, // TrafficHistory; empty before the hub's first answer
    };
    Q_ENUM(Role)

    explicit ForwarderListModel(QObject *parent = nullptr);
    // Tests name devices from a database of their own.
    void setUsbIds(const device::usb::UsbIdDatabase *ids) { m_usbIds = ids; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // GET /api/forwarders's list: rows not in it go, new ones are appended.
    void setForwarderRecords(const QList<api::Forwarder> &forwarders);
    // GET /api/bindings's active bindings: each lands on its forwarder's row.
    void setBindingRecords(const QList<api::Binding> &bindings);
    // The same lists as the hub sends them; a record that cannot be read
    // is left out.
    void setForwarders(const QJsonArray &forwarders);
    void setBindings(const QJsonArray &bindings);
    // One event from the hub's event stream. Returns false when the event
    // names a forwarder this model does not know yet (refresh to learn it).
    bool applyEvent(const QString &event, const QJsonObject &data);

    // GET /api/forwarders/traffic: every row gets its steps, zeros for a
    // forwarder the answer leaves out (it carried nothing).
    void setTraffic(const api::ForwarderTraffic &traffic);

    void setTestRunning(qint64 forwarderId, bool running);
    void setTestOutcome(qint64 forwarderId, const std::optional<TestOutcome> &outcome);

    int rowOf(qint64 forwarderId) const;
    // What a forwarder carries, as its card says it ("l2 eth1", "usb
    // 1050:0407 · Yubico.com · Yubikey 4/5"); empty for one not here.
    QString deviceWords(qint64 forwarderId) const;
    // An empty record for a row that is not there.
    api::Forwarder forwarder(int row) const;
    // The binding that holds the row's forwarder, if any.
    std::optional<api::Binding> binding(int row) const;

private:
    struct Row
    {
        api::Forwarder forwarder;
        std::optional<api::Binding> binding;
        std::optional<TestOutcome> test;
        bool testRunning = false;
        TrafficHistory traffic {};
        qint64 id() const { return forwarder.id; }
    };

    void changed(int row, const QList<int> &roles = {});

    QString deviceName(const std::optional<protocol::DeviceSpec> &device) const;

    QList<Row> m_rows;
    const device::usb::UsbIdDatabase *m_usbIds = nullptr;
};

} // namespace cloop::dashboard
