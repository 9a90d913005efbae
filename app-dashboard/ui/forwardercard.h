#pragma once

#include <QFrame>
#include <QPersistentModelIndex>

class QLabel;
class QPushButton;

namespace cloop::dashboard {

// One forwarder as a card: what it carries, whether it is live, who holds
// it until when, what its last Test said, and its four actions. It renders
// one model row and asks for actions by signal; it decides nothing.
class ForwarderCard final : public QFrame
{
    Q_OBJECT

public:
    explicit ForwarderCard(const QPersistentModelIndex &index, QWidget *parent = nullptr);

    qint64 forwarderId() const { return m_forwarderId; }
    // Re-reads the row (after dataChanged).
    void refresh();

    QPushButton *bindButton() const { return m_bindButton; }
    QPushButton *unbindButton() const { return m_unbindButton; }
    QPushButton *testButton() const { return m_testButton; }
    QPushButton *revokeButton() const { return m_revokeButton; }
    QString stateText() const;
    QString bindingText() const;
    QString testText() const;

Q_SIGNALS:
    void bindRequested(qint64 forwarderId);
    void unbindRequested(qint64 forwarderId);
    void testRequested(qint64 forwarderId);
    void revokeRequested(qint64 forwarderId);

private:
    QPersistentModelIndex m_index;
    qint64 m_forwarderId = 0;
    QLabel *m_kindIcon;
    QLabel *m_nameLabel;
    QLabel *m_stateLabel;
    QLabel *m_deviceLabel;
    QLabel *m_bindingLabel;
    QLabel *m_testLabel;
    QPushButton *m_bindButton;
    QPushButton *m_unbindButton;
    QPushButton *m_testButton;
    QPushButton *m_revokeButton;
};

// "3 h 20 min", "2 days", "45 s": time left until `until`, for a person.
QString describeTimeLeft(const QDateTime &until, const QDateTime &now);

} // namespace cloop::dashboard
