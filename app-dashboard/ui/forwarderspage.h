#pragma once

#include <QList>
#include <QWidget>

class QAbstractItemModel;
class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QVBoxLayout;

namespace cloop::dashboard {

class BindDialog;
class ForwarderCard;
class ForwardersClient;
class HubApi;

// Executors → Device forwarders: a search field, Show revoked, + Enroll
// forwarder, and one card per forwarder that matches, kept in step with the
// client's model.
class ForwardersPage final : public QWidget
{
    Q_OBJECT

public:
    ForwardersPage(HubApi *api, ForwardersClient *forwarders, QWidget *parent = nullptr);

    QLineEdit *searchEdit() const { return m_search; }
    QPushButton *enrollButton() const { return m_enroll; }
    // Revoked forwarders are hidden until this is ticked; it says how many.
    QCheckBox *showRevokedBox() const { return m_showRevoked; }
    QLabel *errorLabel() const { return m_error; }
    QList<ForwarderCard *> cards() const { return m_cards; }
    ForwarderCard *cardFor(qint64 forwarderId) const;

protected:
    // The cards' traffic is asked for while the page is on screen only.
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

Q_SIGNALS:
    // A dialog opened by this page (tests drive it; it is modal to the window).
    void dialogOpened(QDialog *dialog);

private:
    void rebuildCards();
    void refreshCards(const QModelIndex &first, const QModelIndex &last);
    void openEnroll();
    void openReenroll(qint64 forwarderId);
    void openBind(qint64 forwarderId);
    void openUnbind(qint64 forwarderId);
    void openRevoke(qint64 forwarderId);
    void openDialog(QDialog *dialog);

    HubApi *m_api;
    ForwardersClient *m_forwarders;
    QSortFilterProxyModel *m_filter;
    QLineEdit *m_search;
    QPushButton *m_enroll;
    QCheckBox *m_showRevoked;
    QLabel *m_error;
    QLabel *m_empty;
    QVBoxLayout *m_cardLayout;
    QList<ForwarderCard *> m_cards;
};

} // namespace cloop::dashboard
