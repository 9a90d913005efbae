#include "app-dashboard/core/forwarderlistmodel.h"

#include <QSet>

namespace cloop::dashboard {

namespace {

QString text(const QJsonObject &object, const char *key)
{
    return object.value(QLatin1String(key)).toString();
}

QDateTime time(const QJsonObject &object, const char *key)
{
    return QDateTime::fromString(text(object, key), Qt::ISODateWithMs);
}

qint64 idOf(const QJsonObject &object, const char *key = "id")
{
    return object.value(QLatin1String(key)).toInteger();
}

} // namespace

qint64 ForwarderListModel::Row::id() const
{
    return idOf(forwarder);
}

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
    const QJsonObject &f = row.forwarder;
    const QJsonObject &b = row.binding;
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return text(f, "name");
    case IdRole:
        return row.id();
    case DeviceRole:
        return text(f, "device_description");
    case DeviceNameRole:
        return deviceName(f.value(QLatin1String("device")).toObject());
    case KindRole:
        return f.value(QLatin1String("device")).toObject().value(QLatin1String("kind")).toString();
    case StateRole:
        return text(f, "state");
    case ConnectedRole:
        return f.value(QLatin1String("connected")).toBool();
    case HubMemberRole:
        return f.value(QLatin1String("connected")).toBool() ? text(f, "hub_member") : QString();
    case DeviceUnpluggedRole: {
        // Null: nobody knows; empty: the forwarder said it is gone.
        const QJsonValue busId = f.value(QLatin1String("usb_busid"));
        return f.value(QLatin1String("connected")).toBool() && busId.isString()
            && busId.toString().isEmpty();
    }
    case LastSeenRole:
        return time(f, "last_seen");
    case BindingIdRole:
        return idOf(b);
    case BindingProjectRole:
        return text(b, "project");
    case BindingExecutorRole:
        return text(b, "virtual_executor");
    case BindingTargetRole:
        return text(b, "target");
    case BindingAddressRole:
        return text(b, "address");
    case BindingExpiresRole:
        return time(b, "expires_at");
    case BindingCreatedByRole:
        return text(b, "created_by");
    case TestSummaryRole:
        return row.testSummary;
    case TestRunningRole:
        return row.testRunning;
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
        { TestRunningRole, "testRunning" } });
    return names;
}

QString ForwarderListModel::deviceName(const QJsonObject &device) const
{
    if (device.value(QLatin1String("kind")).toString() != QLatin1String("usb"))
        return {};
    bool vendorOk = false;
    bool productOk = false;
    const auto vendor
        = quint16(device.value(QLatin1String("vendor")).toString().toUInt(&vendorOk, 16));
    const auto product
        = quint16(device.value(QLatin1String("product")).toString().toUInt(&productOk, 16));
    if (!vendorOk || !productOk)
        return {};
    // Read on first need: most screens never name a USB device.
    const device::usb::UsbIdDatabase &ids
        = m_usbIds ? *m_usbIds : device::usb::UsbIdDatabase::system();
    QStringList names;
    for (const QString &name : { ids.vendorName(vendor), ids.productName(vendor, product) }) {
        if (!name.isEmpty())
            names.append(name);
    }
    return names.join(QStringLiteral(" · "));
}

void ForwarderListModel::setForwarders(const QJsonArray &forwarders)
{
    QSet<qint64> present;
    for (const QJsonValue &value : forwarders)
        present.insert(idOf(value.toObject()));
    for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
        if (present.contains(m_rows.at(row).id()))
            continue;
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        endRemoveRows();
    }
    for (const QJsonValue &value : forwarders) {
        const QJsonObject forwarder = value.toObject();
        const qint64 id = idOf(forwarder);
        if (id <= 0)
            continue;
        if (const int row = rowOf(id); row >= 0) {
            if (m_rows[row].forwarder != forwarder) {
                m_rows[row].forwarder = forwarder;
                changed(row);
            }
            continue;
        }
        const int row = int(m_rows.size());
        beginInsertRows({}, row, row);
        m_rows.append(Row { forwarder, {}, {}, false });
        endInsertRows();
    }
}

void ForwarderListModel::setBindings(const QJsonArray &bindings)
{
    QHash<qint64, QJsonObject> byForwarder;
    for (const QJsonValue &value : bindings) {
        const QJsonObject binding = value.toObject();
        if (text(binding, "state") == QLatin1String("active"))
            byForwarder.insert(idOf(binding, "forwarder_id"), binding);
    }
    for (int row = 0; row < m_rows.size(); ++row) {
        const QJsonObject binding = byForwarder.value(m_rows.at(row).id());
        if (m_rows.at(row).binding != binding) {
            m_rows[row].binding = binding;
            changed(row);
        }
    }
}

bool ForwarderListModel::applyEvent(const QString &event, const QJsonObject &data)
{
    const bool aboutBinding = event.startsWith(QLatin1String("binding."));
    const int row = rowOf(aboutBinding ? idOf(data, "forwarder_id") : idOf(data));
    if (row < 0)
        return !event.startsWith(QLatin1String("forwarder.")) && !aboutBinding;
    Row &r = m_rows[row];
    if (event == QLatin1String("forwarder.connected")) {
        r.forwarder.insert(QStringLiteral("connected"), true);
        r.forwarder.insert(QStringLiteral("state"), QStringLiteral("connected"));
        r.forwarder.insert(QStringLiteral("hub_member"), data.value(QLatin1String("hub_member")));
    } else if (event == QLatin1String("forwarder.device")) {
        r.forwarder.insert(QStringLiteral("usb_busid"), data.value(QLatin1String("usb_busid")));
    } else if (event == QLatin1String("forwarder.disconnected")) {
        r.forwarder.insert(QStringLiteral("usb_busid"), QJsonValue());
        r.forwarder.insert(QStringLiteral("connected"), false);
        r.forwarder.insert(QStringLiteral("state"), QStringLiteral("disconnected"));
        r.forwarder.insert(QStringLiteral("last_seen"),
            QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
    } else if (event == QLatin1String("forwarder.revoked")) {
        r.forwarder.insert(QStringLiteral("connected"), false);
        r.forwarder.insert(QStringLiteral("state"), QStringLiteral("revoked"));
        r.binding = {};
    } else if (event == QLatin1String("binding.created")) {
        if (text(data, "state") == QLatin1String("active"))
            r.binding = data;
    } else if (event == QLatin1String("binding.ended")) {
        if (idOf(r.binding) == idOf(data))
            r.binding = {};
    } else {
        return true;
    }
    changed(row);
    return true;
}

void ForwarderListModel::setTestRunning(qint64 forwarderId, bool running)
{
    const int row = rowOf(forwarderId);
    if (row < 0 || m_rows.at(row).testRunning == running)
        return;
    m_rows[row].testRunning = running;
    changed(row);
}

void ForwarderListModel::setTestSummary(qint64 forwarderId, const QString &summary)
{
    const int row = rowOf(forwarderId);
    if (row < 0)
        return;
    m_rows[row].testSummary = summary;
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

QJsonObject ForwarderListModel::forwarder(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).forwarder : QJsonObject();
}

QJsonObject ForwarderListModel::binding(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).binding : QJsonObject();
}

void ForwarderListModel::changed(int row)
{
    const QModelIndex at = index(row);
    Q_EMIT dataChanged(at, at);
}

} // namespace cloop::dashboard
