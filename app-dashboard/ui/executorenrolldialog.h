#pragma once

#include "app-dashboard/ui/enrollmentdialog.h"

class QLineEdit;

namespace cloop::dashboard {

// + Enroll executor: a name, checked as typed, then the single-use command
// that starts the agent on the machine that will run sandboxes. Opened for
// an executor that never redeemed its command, it asks nothing and issues a
// new one in place of the old.
class ExecutorEnrollDialog final : public EnrollmentDialog
{
    Q_OBJECT

public:
    explicit ExecutorEnrollDialog(HubApi *api, QWidget *parent = nullptr);
    // A new command for executor `executorId`, called `name`.
    ExecutorEnrollDialog(
        HubApi *api, qint64 executorId, const QString &name, QWidget *parent = nullptr);

    QString problem() const override;

    QLineEdit *nameEdit() const { return m_name; }

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;
    void succeeded(const QJsonObject &answer) override;

private:
    HubApi *m_api;
    QLineEdit *m_name;
};

} // namespace cloop::dashboard
