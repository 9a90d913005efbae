#include "app-dashboard/core/forwarderlistmodel.h"

#include "common/api/hubeventname.h"

#include "app-dashboard/core/logging.h"

#include <QSet>

namespace cloop::dashboard {

namespace eventname = api::hubeventname;

namespace {

// The records of a list as the hub sends it; one that cannot be read is
// said and left out, the rest still show.
template <typename Record> QList<Record> readable(const QJsonArray &list)
{
    QList<Record> records;
    for (const QJsonValue &value : list) {
        auto record = Record::fromJson(value.toObject());
        if (record)
            records.append(std::move(*record));
        else
            qCWarning(lcDashboardApi).noquote() << record.error().message;
    }
    return records;
}

} // namespace

ForwarderListModel::ForwarderListModel(QObject *parent)
    : QAbstractListModel(parent)
{ }

int ForwarderListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant ForwarderListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    const api::Forwarder &f = row.forwarder;
    const api::Binding b = row.binding.value_or(api::Binding {});
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return f.name;
    case IdRole:
        return row.id();
    case DeviceRole:
        return f.deviceDescription;
    case DeviceNameRole:
        return deviceName(f.device);
    case KindRole:
        return f.device ? QString(protocol::deviceKindName(f.device->kind)) : QString();
    case StateRole:
        return QString(api::EnrolledDaemon::stateName(f.state));
    case ConnectedRole:
        return f.connected;
    case HubMemberRole:
        return f.connected ? f.hubMember : QString();
    case DeviceUnpluggedRole:
        // None: nobody knows; empty: the forwarder said it is gone.
        return f.isUnplugged();
    case LastSeenRole:
        return f.lastSeen;
    case BindingIdRole:
        return b.id;
    case BindingProjectRole:
        return b.project;
    case BindingExecutorRole:
        return b.virtualExecutor;
    case BindingTargetRole:
        return b.target;
    case BindingAddressRole:
        return b.address;
    case BindingExpiresRole:
        return b.expiresAt;
    case BindingCreatedByRole:
        return b.createdBy;
    case TestSummaryRole:
        return row.test ? row.test->summary : QString();
    case TestDetailsRole:
        return row.test ? row.test->details : QString();
    case TestPassedRole:
        return row.test ? QVariant(row.test->passed) : QVariant();
    case TestFinishedAtRole:
        return row.test ? row.test->finishedAt : QDateTime();
    case CreatedAtRole:
        return f.createdAt;
    case RevokedAtRole:
        return f.revokedAt;
    case TestRunningRole:
        return row.testRunning;
    case TrafficRole:
        return QVariant::fromValue(row.traffic);
    default:
        return {};
    }
}

QHash<int, QByteArray> ForwarderListModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert({ { IdRole, "forwarderId" }, { NameRole, "name" }, { DeviceRole, "device" },
        { DeviceNameRole, "deviceName" }, { KindRole, "kind" }, { StateRole, "state" },
        { ConnectedRole, "connected" }, { HubMemberRole, "hubMember" },
        { DeviceUnpluggedRole, "deviceUnplugged" }, { LastSeenRole, "lastSeen" },
        { BindingIdRole, "bindingId" }, { BindingProjectRole, "bindingProject" },
        { BindingExecutorRole, "bindingExecutor" }, { BindingTargetRole, "bindingTarget" },
        { BindingAddressRole, "bindingAddress" }, { BindingExpiresRole, "bindingExpires" },
        { BindingCreatedByRole, "bindingCreatedBy" }, { TestSummaryRole, "testSummary" },
        { TestDetailsRole, "testDetails" }, { TestPassedRole, "testPassed" },
        { TestFinishedAtRole, "testFinishedAt" }, { TestRunningRole, "testRunning" },
        { CreatedAtRole, "createdAt" }, { RevokedAtRole, "revokedAt" },
        { TrafficRole, "traffic" } });
    return names;
}

QString ForwarderListModel::deviceName(const std::optional<protocol::DeviceSpec> &device) const
{
    if (!device || device->kind != protocol::DeviceSpec::Kind::Usb)
        return {};
    // Read on first need: most screens never name a USB device.
    const device::usb::UsbIdDatabase &ids
        = m_usbIds ? *m_usbIds : device::usb::UsbIdDatabase::system();
    QStringList names;
    for (const QString &name : { ids.vendorName(device->vendorId),
             ids.productName(device->vendorId, device->productId) }) {
        if (!name.isEmpty())
            names.append(name);
    }
    return names.join(QStringLiteral(" · "));
}

void ForwarderListModel::setForwarders(const QJsonArray &forwarders)
{
    setForwarderRecords(readable<api::Forwarder>(forwarders));
}

void ForwarderListModel::setBindings(const QJsonArray &bindings)
{
    setBindingRecords(readable<api::Binding>(bindings));
}

void ForwarderListModel::setForwarderRecords(const QList<api::Forwarder> &forwarders)
{
    QSet<qint64> present;
    for (const api::Forwarder &forwarder : forwarders)
        present.insert(forwarder.id);
    for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
        if (present.contains(m_rows.at(row).id()))
            continue;
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        endRemoveRows();
    }
    for (const api::Forwarder &forwarder : forwarders) {
        if (forwarder.id <= 0)
            continue;
        if (const int row = rowOf(forwarder.id); row >= 0) {
            if (!(m_rows[row].forwarder == forwarder)) {
                m_rows[row].forwarder = forwarder;
                changed(row);
            }
            continue;
        }
        const int row = int(m_rows.size());
        beginInsertRows({}, row, row);
        m_rows.append(Row { forwarder, std::nullopt, std::nullopt, false, {} });
        endInsertRows();
    }
}

void ForwarderListModel::setBindingRecords(const QList<api::Binding> &bindings)
{
    QHash<qint64, api::Binding> byForwarder;
    for (const api::Binding &binding : bindings) {
        if (binding.isActive())
            byForwarder.insert(binding.forwarderId, binding);
    }
    for (int row = 0; row < m_rows.size(); ++row) {
        const auto found = byForwarder.constFind(m_rows.at(row).id());
        const std::optional<api::Binding> binding
            = found == byForwarder.cend() ? std::nullopt : std::optional<api::Binding>(*found);
        if (!(m_rows.at(row).binding == binding)) {
            m_rows[row].binding = binding;
            changed(row);
        }
    }
}

bool ForwarderListModel::applyEvent(const QString &event, const QJsonObject &data)
{
    const bool aboutBinding = event.startsWith(eventname::kBindingFamily);
    const bool aboutForwarder = event.startsWith(eventname::kForwarderFamily);
    if (!aboutBinding && !aboutForwarder)
        return true;
    // A forwarder event carries part of its record, a binding event all of it.
    auto forwarder = api::Forwarder::fromJson(data);
    auto binding = api::Binding::fromJson(data);
    if ((aboutForwarder && !forwarder) || (aboutBinding && !binding)) {
        qCWarning(lcDashboardEvents).noquote()
            << "unreadable" << event
            << "event:" << (aboutForwarder ? forwarder.error().message : binding.error().message);
        return false;
    }
    const int row = rowOf(aboutBinding ? binding->forwarderId : forwarder->id);
    if (row < 0)
        return false;
    Row &r = m_rows[row];
    api::Forwarder &shown = r.forwarder;
    if (event == eventname::kForwarderConnected) {
        shown.connected = true;
        shown.state = api::EnrolledDaemon::State::Connected;
        shown.hubMember = forwarder->hubMember;
    } else if (event == eventname::kForwarderDevice) {
        shown.usbBusId = forwarder->usbBusId;
    } else if (event == eventname::kForwarderDisconnected) {
        shown.usbBusId.reset();
        shown.connected = false;
        shown.state = api::EnrolledDaemon::State::Disconnected;
        shown.lastSeen = QDateTime::currentDateTimeUtc();
    } else if (event == eventname::kForwarderRevoked) {
        shown.connected = false;
        shown.state = api::EnrolledDaemon::State::Revoked;
        shown.revokedAt = QDateTime::currentDateTimeUtc();
        r.binding.reset();
    } else if (event == eventname::kBindingCreated) {
        if (binding->isActive())
            r.binding = *binding;
    } else if (event == eventname::kBindingEnded) {
        if (r.binding && r.binding->id == binding->id)
            r.binding.reset();
    } else {
        return true;
    }
    changed(row);
    return true;
}

void ForwarderListModel::setTraffic(const api::ForwarderTraffic &traffic)
{
    const QList<qint64> quiet(traffic.steps, 0);
    for (int row = 0; row < m_rows.size(); ++row) {
        const api::ForwarderTraffic::Item *item = traffic.itemOf(m_rows.at(row).id());
        TrafficHistory history { traffic.stepSeconds, traffic.until,
            item ? item->toAgentBytes : quiet, item ? item->toForwarderBytes : quiet,
            item && item->urbs, item ? item->toAgentFrames : QList<qint64>(),
            item ? item->toForwarderFrames : QList<qint64>(),
            item ? item->droppedToAgent : QList<qint64>(),
            item ? item->droppedToForwarder : QList<qint64>() };
        if (m_rows.at(row).traffic == history)
            continue;
        m_rows[row].traffic = std::move(history);
        changed(row, { TrafficRole });
    }
}

void ForwarderListModel::setTestRunning(qint64 forwarderId, bool running)
{
    const int row = rowOf(forwarderId);
    if (row < 0 || m_rows.at(row).testRunning == running)
        return;
    m_rows[row].testRunning = running;
    changed(row);
}

void ForwarderListModel::setTestOutcome(
    qint64 forwarderId, const std::optional<TestOutcome> &outcome)
{
    const int row = rowOf(forwarderId);
    if (row < 0 || m_rows.at(row).test == outcome)
        return;
    m_rows[row].test = outcome;
    changed(row);
}

int ForwarderListModel::rowOf(qint64 forwarderId) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).id() == forwarderId)
            return row;
    }
    return -1;
}

QString ForwarderListModel::deviceWords(qint64 forwarderId) const
{
    const int row = rowOf(forwarderId);
    if (row < 0)
        return {};
    const api::Forwarder &shown = m_rows.at(row).forwarder;
    const QString name = deviceName(shown.device);
    return name.isEmpty() ? shown.deviceDescription
                          : QStringLiteral("%1 · %2").arg(shown.deviceDescription, name);
}

api::Forwarder ForwarderListModel::forwarder(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).forwarder : api::Forwarder();
}

std::optional<api::Binding> ForwarderListModel::binding(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).binding : std::nullopt;
}

void ForwarderListModel::changed(int row, const QList<int> &roles)
{
    const QModelIndex at = index(row);
    Q_EMIT dataChanged(at, at, roles);
}

} // namespace cloop::dashboard
