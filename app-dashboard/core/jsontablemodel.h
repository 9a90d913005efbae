#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>

#include <functional>
#include <optional>

namespace cloop::dashboard {

// Records from the admin API (executors, requests, bindings, audit
// entries) as a table: each column says how to show a record. Rows are
// keyed by the record's "id", so a reload updates rows in place and views
// keep their selection.
class JsonTableModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JsonTableModel)

public:
    // The whole record, for whoever acts on a row.
    static constexpr int RecordRole = Qt::UserRole + 1;
    // What the column sorts by, when that is not its text (times, numbers).
    static constexpr int SortRole = Qt::UserRole + 2;

    struct Column
    {
        QString header;
        std::function<QString(const QJsonObject &)> text;
        std::function<QVariant(const QJsonObject &)> sortKey = {};
    };

    explicit JsonTableModel(QList<Column> columns, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setRecords(const QJsonArray &records);
    QJsonObject record(int row) const;
    int rowOf(qint64 id) const;

private:
    QList<Column> m_columns;
    QList<QJsonObject> m_records;
};

// Column helpers for the common shapes.
JsonTableModel::Column textColumn(const QString &header, const QString &key);
// An ISO time shown in the local time zone, sorted by the instant.
JsonTableModel::Column timeColumn(const QString &header, const QString &key);
JsonTableModel::Column timeColumnOf(
    const QString &header, std::function<QDateTime(const QJsonObject &)> instant);

// Columns that read each record as the type it is (common/api): `text` and
// `time` take the record. A record that type cannot read shows empty.
template <typename Record, typename Text>
JsonTableModel::Column recordColumn(const QString &header, Text text)
{
    return { header, [text](const QJsonObject &json) {
                const auto record = Record::fromJson(json);
                return record ? QString(text(*record)) : QString();
            } };
}

template <typename Record, typename Time>
JsonTableModel::Column recordTimeColumn(const QString &header, Time time)
{
    return timeColumnOf(header, [time](const QJsonObject &json) {
        const auto record = Record::fromJson(json);
        return record ? QDateTime(time(*record)) : QDateTime();
    });
}

} // namespace cloop::dashboard
