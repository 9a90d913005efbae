#include "app-dashboard/core/jsontablemodel.h"

#include "app-dashboard/core/plaintooltip.h"
#include "app-dashboard/core/timewords.h"

#include <QDateTime>
#include <QHash>
#include <QLocale>
#include <QSet>

namespace cloop::dashboard {

namespace {

qint64 idOf(const QJsonObject &record)
{
    return record.value(QLatin1String("id")).toInteger();
}

} // namespace

JsonTableModel::JsonTableModel(QList<Column> columns, QObject *parent)
    : QAbstractTableModel(parent)
    , m_columns(std::move(columns))
{ }

int JsonTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_records.size());
}

int JsonTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QVariant JsonTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &record = m_records.at(index.row());
    const Column &column = m_columns.at(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return column.text(record);
    case Qt::ToolTipRole:
        return plainToolTip(column.text(record));
    case RecordRole:
        return record;
    case SortRole:
        return column.sortKey ? column.sortKey(record) : QVariant(column.text(record));
    default:
        return {};
    }
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0
        || section >= m_columns.size())
        return {};
    return m_columns.at(section).header;
}

void JsonTableModel::setRecords(const QJsonArray &records)
{
    QSet<qint64> present;
    for (const QJsonValue &value : records)
        present.insert(idOf(value.toObject()));
    // Gone records leave in contiguous runs, from the end: an audit log
    // narrowed from 90 days to an hour drops thousands of rows at once.
    for (int last = int(m_records.size()) - 1; last >= 0;) {
        if (present.contains(idOf(m_records.at(last)))) {
            --last;
            continue;
        }
        int first = last;
        while (first > 0 && !present.contains(idOf(m_records.at(first - 1))))
            --first;
        beginRemoveRows({}, first, last);
        m_records.remove(first, last - first + 1);
        endRemoveRows();
        last = first - 1;
    }
    QHash<qint64, int> rowById;
    rowById.reserve(m_records.size());
    for (int row = 0; row < m_records.size(); ++row)
        rowById.insert(idOf(m_records.at(row)), row);
    QList<QJsonObject> added;
    for (const QJsonValue &value : records) {
        const QJsonObject record = value.toObject();
        if (idOf(record) <= 0)
            continue;
        if (const int row = rowById.value(idOf(record), -1); row >= 0) {
            if (m_records.at(row) != record) {
                m_records[row] = record;
                Q_EMIT dataChanged(index(row, 0), index(row, columnCount() - 1));
            }
        } else {
            added.append(record);
        }
    }
    if (added.isEmpty())
        return;
    beginInsertRows({}, int(m_records.size()), int(m_records.size() + added.size() - 1));
    m_records.append(added);
    endInsertRows();
}

QJsonObject JsonTableModel::record(int row) const
{
    return row >= 0 && row < m_records.size() ? m_records.at(row) : QJsonObject();
}

int JsonTableModel::rowOf(qint64 id) const
{
    for (int row = 0; row < m_records.size(); ++row) {
        if (idOf(m_records.at(row)) == id)
            return row;
    }
    return -1;
}

JsonTableModel::Column textColumn(const QString &header, const QString &key)
{
    return { header, [key](const QJsonObject &record) {
                const QJsonValue value = record.value(key);
                return value.isDouble() ? QString::number(value.toInteger()) : value.toString();
            } };
}

JsonTableModel::Column timeColumn(const QString &header, const QString &key)
{
    return timeColumnOf(header, [key](const QJsonObject &record) {
        return QDateTime::fromString(record.value(key).toString(), Qt::ISODateWithMs);
    });
}

JsonTableModel::Column timeColumnOf(
    const QString &header, std::function<QDateTime(const QJsonObject &)> instant)
{
    return { header,
        [instant](const QJsonObject &record) {
            const QDateTime at = instant(record);
            return describeInstant(at);
        },
        [instant](
            const QJsonObject &record) { return QVariant(instant(record).toMSecsSinceEpoch()); } };
}

} // namespace cloop::dashboard
