#pragma once

#include "app-dashboard/ui/formdialog.h"

#include "common/api/bindingrequest.h"

class QComboBox;
class QLineEdit;

namespace cloop::dashboard {

class ForwardersClient;

// Approve…: the request as filed, and the two things an approver may only
// narrow: how long (no longer than asked) and which executor.
class ApproveDialog final : public FormDialog
{
    Q_OBJECT

public:
    ApproveDialog(ForwardersClient *forwarders, const api::BindingRequest &request,
        QWidget *parent = nullptr);

    QString problem() const override;
    QComboBox *ttlBox() const { return m_ttl; }
    QLineEdit *executorEdit() const { return m_executor; }
    // What is sent: empty for "as requested".
    QString ttl() const;

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;

private:
    ForwardersClient *m_forwarders;
    api::BindingRequest m_request;
    QComboBox *m_ttl;
    QLineEdit *m_executor;
};

} // namespace cloop::dashboard
